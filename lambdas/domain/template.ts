import type { Channel } from './channel.ts';
import { DomainError } from './errors.ts';
import type { Priority } from './priority.ts';

/*
 * A template: its closed variables contract, its bodies per channel, and the errors rendering
 * and the catalog raise. Checking variables is ./template-variables.ts, rendering
 * ./template-render.ts, the catalog and its self-check ./template-catalog.ts, an SMS's billed
 * length ./sms-shape.ts.
 */

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

export const VariableType = {
  string: 'string',
  httpsUrl: 'https_url',
  number: 'number',
  /** ISO 8601 calendar date (`2026-12-01`) or date-time (`2026-12-01T09:00`, optional offset). */
  date: 'date',
} as const;

export type VariableType = (typeof VariableType)[keyof typeof VariableType];

export interface VariableSpec {
  readonly type: VariableType;
  readonly required: boolean;
  /**
   * In Unicode code points; applies to every type but `number`. When absent,
   * `DEFAULT_VARIABLE_MAX_LENGTH` applies: variables are kept (encrypted) until the channel is
   * terminal, and an unbounded value would bloat every ledger write.
   */
  readonly maxLength?: number;
}

export const DEFAULT_VARIABLE_MAX_LENGTH = 1000;

export interface TemplateDefinition {
  /** kebab-case, e.g. `lab-result-ready`. */
  readonly id: string;
  /** `v3`, `v3.1`, `v3.1.2`. A released version is immutable: change copy by adding a version. */
  readonly version: string;
  readonly description: string;
  /** The closed variables contract: anything not declared here is rejected at intake. */
  readonly variables: Readonly<Record<string, VariableSpec>>;
  readonly email?: { readonly subject: string; readonly text: string; readonly html: string };
  readonly sms?: { readonly text: string };
  /** Static text (not a template) appended after the rendered body of that channel. */
  readonly disclaimer?: { readonly email?: string; readonly sms?: string };
  /** The lane of its notices when a request names none (docs/architecture.md §11); absent: standard. */
  readonly priority?: Priority;
  /**
   * The channel fallback its notices get when a request names none (docs/architecture.md §12):
   * `within` an ISO 8601 duration (`PT10M`). Applied only where it fits the request — `from`
   * requested, `to` not, and the recipient's `to` destination given — and otherwise not at all.
   */
  readonly fallback?: { readonly from: Channel; readonly to: Channel; readonly within: string };
}

export interface TemplateCatalog {
  lookup(id: string, version: string): TemplateDefinition | undefined;
  list(): readonly TemplateDefinition[];
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

export const TemplateRenderErrorCode = {
  channelMissing: 'template_channel_missing',
  syntax: 'template_syntax_error',
  variablesInvalid: 'template_variables_invalid',
} as const;

export type TemplateRenderErrorCode = (typeof TemplateRenderErrorCode)[keyof typeof TemplateRenderErrorCode];

/**
 * Rendering cannot produce a correct message. Messages name templates, channels, variable
 * names and violation codes only, never variable values, so the error is safe to log.
 */
export class TemplateRenderError extends DomainError {
  readonly templateId: string;
  readonly templateVersion: string;
  constructor(
    code: TemplateRenderErrorCode,
    template: Pick<TemplateDefinition, 'id' | 'version'>,
    message: string,
  ) {
    super(code, `${template.id} ${template.version}: ${message}`);
    this.name = 'TemplateRenderError';
    this.templateId = template.id;
    this.templateVersion = template.version;
  }
}

/** The catalog was built from definitions that fail `lintTemplate` or repeat an (id, version). */
export class TemplateDefinitionError extends DomainError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('template_definition_invalid', `invalid template catalog: ${problems.join('; ')}`);
    this.name = 'TemplateDefinitionError';
    this.problems = problems;
  }
}
