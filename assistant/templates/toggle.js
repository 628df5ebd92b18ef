element.addEventListener('change', (event) => {
  const select = event.target.closest('select.gg-state');
  if (select) {
    const li = select.closest('li.gg-res');
    if (li) {
      li.className = li.className.replace(/\bgg-st-\w+/, 'gg-st-' + select.value);
      li.classList.toggle('gg-done', select.value === 'read');
      const check = li.querySelector('input.gg-check');
      if (check) check.checked = select.value === 'read';
    }
    trigger('select', {index: select.dataset.rid, value: 'state:' + select.value, selected: true});
    return;
  }
  const box = event.target.closest('input.gg-check');
  if (!box) return;
  const item = box.closest('li.gg-res');
  if (item) {
    item.classList.toggle('gg-done', box.checked);
    const state = item.querySelector('select.gg-state');
    if (state) state.value = box.checked ? 'read' : 'unread';
  }
  const block = box.closest('section.gg-topic-block');
  const count = block && block.querySelector('.gg-count');
  if (count) {
    const boxes = block.querySelectorAll('input.gg-check');
    const done = Array.from(boxes).filter((b) => b.checked).length;
    count.textContent = done + '/' + boxes.length;
  }
  trigger('select', {index: box.dataset.rid, value: box.dataset.rid, selected: box.checked});
});
element.addEventListener('click', (event) => {
  const button = event.target.closest('button.gg-digest-button');
  if (!button) return;
  trigger('select', {index: button.dataset.rid, value: 'digest:' + button.dataset.kind, selected: true});
});
