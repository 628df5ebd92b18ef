element.addEventListener('change', (event) => {
  const box = event.target.closest('input.gg-check');
  if (!box) return;
  const item = box.closest('li.gg-res');
  if (item) item.classList.toggle('gg-done', box.checked);
  const block = box.closest('section.gg-topic-block');
  const count = block && block.querySelector('.gg-count');
  if (count) {
    const boxes = block.querySelectorAll('input.gg-check');
    const done = Array.from(boxes).filter((b) => b.checked).length;
    count.textContent = done + '/' + boxes.length;
  }
  trigger('select', {index: box.dataset.rid, value: box.dataset.rid, selected: box.checked});
});
