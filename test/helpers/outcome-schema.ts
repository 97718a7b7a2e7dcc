import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';

type Validate = ((value: unknown) => boolean) & { errors?: unknown };

/** docs/outcome-events.schema.json (JSON Schema draft-04, as the stack's schema registry holds it), compiled. */
export function outcomeEventValidator(): Validate {
  // CommonJS default export, seen through ESM interop either way.
  const Ajv = ((AjvDraft04 as unknown as { default?: unknown }).default ?? AjvDraft04) as new (
    options: object,
  ) => {
    compile(schema: unknown): Validate;
  };
  const ajv = new Ajv({ strict: false });
  (addFormats as unknown as (ajv: unknown) => void)(ajv);
  return ajv.compile(
    JSON.parse(readFileSync(join(import.meta.dirname, '../../docs/outcome-events.schema.json'), 'utf8')),
  );
}
