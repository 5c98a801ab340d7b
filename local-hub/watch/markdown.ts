// Markdown on the watch page: markdown-it (loaded by the page from /watch/vendor/markdown-it.js) with raw HTML
// off, so tags people or agents write show as text. Its output then passes an allow-list of tags and attributes
// (nothing else survives), links go only to http(s) and mailto, and @mentions are marked. Without the renderer
// the text is shown as it is.

interface MarkdownIt {
  render(src: string): string;
  validateLink: (url: string) => boolean;
}
type MarkdownItFactory = (preset: string, options: Record<string, unknown>) => MarkdownIt;

const factory = (globalThis as unknown as { markdownit?: MarkdownItFactory }).markdownit;
const md = factory?.('default', { html: false, linkify: false, breaks: true, typographer: false });
if (md) {
  const base = md.validateLink;
  md.validateLink = (url) => /^(https?:|mailto:)/i.test(url.trim()) && base(url);
}

const TAGS = new Set(['P', 'BR', 'HR', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'EM', 'STRONG', 'S', 'CODE', 'PRE', 'BLOCKQUOTE', 'UL', 'OL', 'LI', 'A', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'SPAN']);
const ATTRIBUTES: Record<string, readonly string[]> = { A: ['href'], OL: ['start'] };
/** The hub's own mention rule (local-hub/notification-rules.ts). */
const MENTION = /(?<!\w)@([a-z0-9-]+)/gi;

/** `text` as Markdown, safely, into `into` (its children are replaced). */
export function renderMarkdown(text: string, into: HTMLElement): void {
  if (!md) {
    into.replaceChildren(...withMentions(text));
    return;
  }
  const template = document.createElement('template');
  template.innerHTML = md.render(text);
  clean(template.content);
  markMentions(template.content);
  into.replaceChildren(template.content);
  into.classList.add('markdown');
}

/** Removes what is not on the allow-list (keeping the text of a removed element); images become links. */
function clean(root: DocumentFragment): void {
  for (const node of [...root.querySelectorAll('*')]) {
    if (node.tagName === 'IMG') {
      const src = node.getAttribute('src') ?? '';
      const link = document.createElement('a');
      link.textContent = node.getAttribute('alt') || src;
      if (/^https?:/i.test(src)) link.setAttribute('href', src);
      node.replaceWith(link);
      continue;
    }
    if (!TAGS.has(node.tagName)) {
      node.replaceWith(...node.childNodes);
      continue;
    }
    const allowed = ATTRIBUTES[node.tagName] ?? [];
    for (const attr of [...node.attributes]) if (!allowed.includes(attr.name)) node.removeAttribute(attr.name);
  }
  for (const a of root.querySelectorAll('a')) {
    if (!/^(https?:|mailto:)/i.test(a.getAttribute('href') ?? '')) a.removeAttribute('href');
    a.rel = 'noopener noreferrer nofollow';
    a.target = '_blank';
  }
}

/** Wraps @name in text (not in code or links) in a mention span. */
function markMentions(root: DocumentFragment): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!n.parentElement?.closest('code, pre, a')) texts.push(n as Text);
  for (const t of texts) {
    const parts = withMentions(t.data);
    if (parts.length > 1 || typeof parts[0] !== 'string') t.replaceWith(...parts);
  }
}

function withMentions(text: string): Array<string | HTMLElement> {
  const out: Array<string | HTMLElement> = [];
  let at = 0;
  for (const m of text.matchAll(MENTION)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    const span = document.createElement('span');
    span.className = 'mention';
    span.dataset.mention = m[1]!.toLowerCase();
    span.textContent = m[0];
    out.push(span);
    at = m.index + m[0].length;
  }
  if (at < text.length || out.length === 0) out.push(text.slice(at));
  return out;
}
