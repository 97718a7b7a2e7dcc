import { FALLBACK_WITHIN_MAX_MS, FALLBACK_WITHIN_MIN_MS, parseIsoDuration } from './fallback.ts';
import { type TemplateCatalog, type TemplateDefinition, TemplateDefinitionError } from './template.ts';
import { parseBody, type TemplateNode, TemplateSyntaxError } from './template-render.ts';

// The catalog, built once from the repository's definitions, and the self-check that refuses a
// definition whose problems would otherwise surface at send time.

const TEMPLATE_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const TEMPLATE_VERSION = /^v\d+(?:\.\d+){0,2}$/;
const VARIABLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Every body of a template, labelled for problem messages. */
export function templateBodies(
  template: TemplateDefinition,
): { readonly label: string; readonly body: string }[] {
  const bodies: { label: string; body: string }[] = [];
  if (template.email) {
    bodies.push({ label: 'email.subject', body: template.email.subject });
    bodies.push({ label: 'email.text', body: template.email.text });
    bodies.push({ label: 'email.html', body: template.email.html });
  }
  if (template.sms) bodies.push({ label: 'sms.text', body: template.sms.text });
  return bodies;
}

/**
 * Problems that would otherwise surface at send time, as human-readable strings (they name
 * templates and variables, never values). Empty means the definition is sound:
 * - every body parses, and every `{{name}}` / `{{#name}}` is declared in the contract;
 * - every declared variable is used by some body (the contract is also a data-minimisation
 *   promise: never collect a value no message shows);
 * - an optional variable is only substituted inside its own `{{#name}}` section, so an absent
 *   value never leaves an empty slot.
 */
/** A default fallback needs both bodies, two channels and a `within` a request could give. */
function fallbackProblems(template: TemplateDefinition, where: string): string[] {
  const fallback = template.fallback;
  if (!fallback) return [];
  const problems: string[] = [];
  if (fallback.from === fallback.to) problems.push(`${where}: fallback.to must differ from fallback.from`);
  for (const channel of [fallback.from, fallback.to]) {
    if (!template[channel]) problems.push(`${where}: fallback names ${channel} without a ${channel} body`);
  }
  const within = parseIsoDuration(fallback.within);
  if (within === undefined || within < FALLBACK_WITHIN_MIN_MS || within > FALLBACK_WITHIN_MAX_MS) {
    problems.push(`${where}: fallback.within must be an ISO 8601 duration from PT1M to P7D`);
  }
  return problems;
}

export function lintTemplate(template: TemplateDefinition): string[] {
  const where = `${template.id} ${template.version}`;
  const problems: string[] = [];
  if (!TEMPLATE_ID.test(template.id)) problems.push(`${where}: id must be kebab-case`);
  if (!TEMPLATE_VERSION.test(template.version))
    problems.push(`${where}: version must look like v3 or v3.1.2`);
  if (!template.email && !template.sms) problems.push(`${where}: no channel body`);
  problems.push(...fallbackProblems(template, where));

  for (const [name, spec] of Object.entries(template.variables)) {
    if (!VARIABLE_NAME.test(name))
      problems.push(`${where}: variable name ${JSON.stringify(name)} is not an identifier`);
    if (spec.maxLength !== undefined && !(Number.isInteger(spec.maxLength) && spec.maxLength > 0)) {
      problems.push(`${where}: ${name}.maxLength must be a positive integer`);
    }
  }

  const used = new Set<string>();
  const walk = (label: string, nodes: readonly TemplateNode[], guarded: ReadonlySet<string>): void => {
    for (const node of nodes) {
      if (node.kind === 'text') continue;
      used.add(node.name);
      const spec = Object.hasOwn(template.variables, node.name) ? template.variables[node.name] : undefined;
      if (!spec) {
        problems.push(`${where}: ${label} uses undeclared variable ${node.name}`);
        continue;
      }
      if (node.kind === 'section') {
        walk(label, node.body, new Set([...guarded, node.name]));
      } else if (!spec.required && !guarded.has(node.name)) {
        problems.push(`${where}: ${label} uses optional variable ${node.name} outside {{#${node.name}}}`);
      }
    }
  };
  for (const { label, body } of templateBodies(template)) {
    if (body.trim() === '') {
      problems.push(`${where}: ${label} is empty`);
      continue;
    }
    try {
      walk(label, parseBody(body), new Set());
    } catch (error) {
      if (!(error instanceof TemplateSyntaxError)) throw error;
      problems.push(`${where}: ${label}: ${error.message}`);
    }
  }
  if (template.email && /[\r\n]/.test(template.email.subject)) {
    problems.push(`${where}: email.subject must be a single line`);
  }

  for (const name of Object.keys(template.variables)) {
    if (!used.has(name)) problems.push(`${where}: variable ${name} is declared but no body uses it`);
  }

  for (const [channel, text] of Object.entries(template.disclaimer ?? {})) {
    if (text === undefined) continue;
    if (text.includes('{{')) problems.push(`${where}: disclaimer.${channel} is static text, not a template`);
    if (!(channel === 'email' ? template.email : template.sms)) {
      problems.push(`${where}: disclaimer.${channel} without a ${channel} body`);
    }
  }
  return problems;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Builds the catalog once at module load. An invalid definition throws here, on the cold
 * start of every function that bundles it (and in the unit tests), rather than when a worker
 * first tries to send with it. Definitions are frozen: a released version is immutable.
 */
export function createTemplateCatalog(definitions: readonly TemplateDefinition[]): TemplateCatalog {
  const problems: string[] = [];
  const byKey = new Map<string, TemplateDefinition>();
  for (const definition of definitions) {
    problems.push(...lintTemplate(definition));
    // The regexes above forbid a space in id and version, so this key is unambiguous.
    const key = `${definition.id} ${definition.version}`;
    if (byKey.has(key)) problems.push(`${key}: defined more than once`);
    byKey.set(key, deepFreeze(definition));
  }
  if (problems.length > 0) throw new TemplateDefinitionError(problems);

  const all = Object.freeze([...byKey.values()]);
  return {
    lookup: (id, version) => byKey.get(`${id} ${version}`),
    list: () => all,
  };
}
