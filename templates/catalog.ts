import type { TemplateCatalog } from '../lambdas/domain/template.ts';
import { createTemplateCatalog } from '../lambdas/domain/template-catalog.ts';
import { appointmentReminderV1 } from './appointment-reminder/v1.ts';
import { appointmentReminderV2 } from './appointment-reminder/v2.ts';
import { labResultReadyV3 } from './lab-result-ready/v3.ts';

/**
 * Every released template version. Imported statically so esbuild bundles the copy into each
 * function; `createTemplateCatalog` self-checks and freezes them at module load. To change copy,
 * add a new version file and list it here; never edit a released one (recorded intents name
 * the version they were rendered from).
 */
export const templateCatalog: TemplateCatalog = createTemplateCatalog([
  labResultReadyV3,
  appointmentReminderV1,
  appointmentReminderV2,
]);
