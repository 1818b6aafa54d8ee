// Model replies are Markdown written by a model that read attacker-chosen text: rendered with
// raw HTML turned off in `marked`, then sanitised by DOMPurify, whose Trusted Types policy is
// the only one the page's CSP allows to write HTML.

import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: true, async: false });
marked.use({ renderer: { html: () => '' } });

export function renderMarkdown(target, text) {
  const html = marked.parse(String(text));
  target.innerHTML = DOMPurify.sanitize(html, {
    RETURN_TRUSTED_TYPE: true,
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'img', 'iframe'],
    FORBID_ATTR: ['style'],
  });
  for (const a of target.querySelectorAll('a')) {
    a.setAttribute('rel', 'noopener noreferrer nofollow');
    a.setAttribute('target', '_blank');
  }
}
