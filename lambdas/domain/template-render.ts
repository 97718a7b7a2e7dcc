import { type TemplateDefinition, TemplateRenderError } from './template.ts';
import { checkVariables, isPresent } from './template-variables.ts';

// Template syntax: `{{name}}` and `{{#name}}…{{/name}}`, nothing else; and the rendering of a
// template's bodies for one channel.

export type TemplateNode =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'variable'; readonly name: string }
  | { readonly kind: 'section'; readonly name: string; readonly body: readonly TemplateNode[] };

export class TemplateSyntaxError extends Error {}

const TAG = /\{\{([#/]?)([A-Za-z][A-Za-z0-9_]*)\}\}/g;

/** Bodies come from the repository, so the cache is bounded by the catalog's size. */
const parsedBodies = new Map<string, readonly TemplateNode[]>();

export function parseBody(source: string): readonly TemplateNode[] {
  const cached = parsedBodies.get(source);
  if (cached) return cached;

  const root: TemplateNode[] = [];
  const open: { name: string; body: TemplateNode[] }[] = [];
  let current = root;
  let last = 0;
  const pushText = (text: string): void => {
    // A brace pair left in literal text is a malformed tag (`{{ name }}`, `{firstName}}`):
    // rendering it would show raw syntax to a patient.
    if (text.includes('{{') || text.includes('}}')) throw new TemplateSyntaxError('malformed tag');
    if (text !== '') current.push({ kind: 'text', text });
  };

  for (const match of source.matchAll(TAG)) {
    pushText(source.slice(last, match.index));
    last = match.index + match[0].length;
    const [, sigil, name = ''] = match;
    if (sigil === '#') {
      const section = { name, body: [] as TemplateNode[] };
      current.push({ kind: 'section', name, body: section.body });
      open.push(section);
      current = section.body;
    } else if (sigil === '/') {
      const closing = open.pop();
      if (closing?.name !== name) throw new TemplateSyntaxError(`unexpected {{/${name}}}`);
      current = open.at(-1)?.body ?? root;
    } else {
      current.push({ kind: 'variable', name });
    }
  }
  pushText(source.slice(last));
  const unclosed = open.at(-1);
  if (unclosed) throw new TemplateSyntaxError(`unclosed {{#${unclosed.name}}}`);

  parsedBodies.set(source, root);
  return root;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

type Escape = (value: string) => string;
const verbatim: Escape = (value) => value;

function renderNodes(
  template: TemplateDefinition,
  nodes: readonly TemplateNode[],
  variables: Readonly<Record<string, unknown>>,
  encode: Escape,
): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') {
      out += node.text;
      continue;
    }
    const value = Object.hasOwn(variables, node.name) ? variables[node.name] : undefined;
    if (node.kind === 'section') {
      if (isPresent(value)) out += renderNodes(template, node.body, variables, encode);
      continue;
    }
    // Unreachable for a catalog that passed lintTemplate and variables that passed checkVariables.
    if (typeof value === 'number') out += encode(String(value));
    else if (typeof value === 'string' && isPresent(value)) out += encode(value);
    else {
      throw new TemplateRenderError(
        'template_variables_invalid',
        template,
        `${node.name} is used outside a {{#${node.name}}} section but has no value`,
      );
    }
  }
  return out;
}

function renderBody(
  template: TemplateDefinition,
  body: string,
  variables: Readonly<Record<string, unknown>>,
  encode: Escape,
): string {
  let nodes: readonly TemplateNode[];
  try {
    nodes = parseBody(body);
  } catch (error) {
    if (error instanceof TemplateSyntaxError)
      throw new TemplateRenderError('template_syntax_error', template, error.message);
    throw error;
  }
  return renderNodes(template, nodes, variables, encode);
}

/**
 * Intake already checked the contract; checking again costs microseconds and guarantees a
 * worker never sends a message with a hole in it (a row written by a buggy intake, a variable
 * tampered with in storage).
 */
function assertVariables(template: TemplateDefinition, variables: Readonly<Record<string, unknown>>): void {
  const violations = checkVariables(template, variables);
  if (violations.length > 0) {
    throw new TemplateRenderError(
      'template_variables_invalid',
      template,
      violations.map((v) => `${v.path} ${v.code}`).join(', '),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

export interface RenderedSms {
  readonly text: string;
}

function appendHtmlDisclaimer(html: string, disclaimer: string): string {
  const paragraph = `<p style="color:#555555;font-size:12px;line-height:1.4">${escapeHtml(disclaimer)}</p>\n`;
  // Inside <body> when the template is a full document, so clients that strip what follows
  // </body> still show it.
  const at = html.toLowerCase().lastIndexOf('</body>');
  if (at === -1) return `${html.trimEnd()}\n${paragraph}`;
  return `${html.slice(0, at)}${paragraph}${html.slice(at)}`;
}

export function renderEmail(
  template: TemplateDefinition,
  variables: Readonly<Record<string, unknown>>,
): RenderedEmail {
  const email = template.email;
  if (!email) throw new TemplateRenderError('template_channel_missing', template, 'no email body');
  assertVariables(template, variables);

  const subject = renderBody(template, email.subject, variables, verbatim);
  let text = renderBody(template, email.text, variables, verbatim).trimEnd();
  let html = renderBody(template, email.html, variables, escapeHtml);
  const disclaimer = template.disclaimer?.email;
  if (disclaimer) {
    text = `${text}\n\n${disclaimer}`;
    html = appendHtmlDisclaimer(html, disclaimer);
  }
  return { subject, text: `${text}\n`, html };
}

export function renderSms(
  template: TemplateDefinition,
  variables: Readonly<Record<string, unknown>>,
): RenderedSms {
  const sms = template.sms;
  if (!sms) throw new TemplateRenderError('template_channel_missing', template, 'no sms body');
  assertVariables(template, variables);

  // No trailing newline: in SMS every character is billed.
  const text = renderBody(template, sms.text, variables, verbatim).trimEnd();
  const disclaimer = template.disclaimer?.sms;
  return { text: disclaimer ? `${text}\n${disclaimer}` : text };
}
