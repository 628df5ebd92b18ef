() => {
  // The chat, for a newcomer: the question box keeps the focus (and stays usable) while an answer is written,
  // a second Enter during an answer is held back, and each new question scrolls to the top of the chat area
  // so the question and the start of its answer are both in view.
  const chatBusy = () => document.querySelector('#gg-chat .gg-pending, #gg-chat .gg-draft') !== null;
  const box = () => document.querySelector('#gg-question textarea');
  const scroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (/(auto|scroll)/.test(s.overflowY) && p.scrollHeight > p.clientHeight) return p;
    }
    return null;
  };
  // The newest question is scrolled to the top of the chat area once the chat is tall enough to scroll;
  // after that the learner's own scrolling is left alone.
  let placed = 0;
  const onChange = () => {
    const questions = document.querySelectorAll('#gg-chat .gg-question');
    if (questions.length < placed) placed = 0;  // a new conversation
    if (questions.length > placed) {
      const q = questions[questions.length - 1];
      const area = scroller(q);
      if (area) {
        const target = Math.max(0, q.getBoundingClientRect().top - area.getBoundingClientRect().top + area.scrollTop - 8);
        area.scrollTop = target;
        if (Math.abs(area.scrollTop - target) < 2) placed = questions.length;  // else: retried as the answer grows
      }
    }
    const b = box();
    if (b && (document.activeElement === document.body || document.activeElement === null)) b.focus();
  };
  const watch = () => {
    const chat = document.querySelector('#gg-chat');
    if (!chat) { setTimeout(watch, 200); return; }
    new MutationObserver(onChange).observe(chat, {childList: true, subtree: true, characterData: true});
  };
  watch();
  document.addEventListener('keydown', (event) => {
    const b = box();
    if (!b || event.target !== b || event.key !== 'Enter' || event.shiftKey) return;
    if (chatBusy()) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);
  document.addEventListener('click', (event) => {
    if (event.target.closest && event.target.closest('#gg-ask')) setTimeout(() => { const b = box(); if (b) b.focus(); }, 0);
  });
}
