/** The deployment settings file, relative to the repository root (lib/config.ts reads it). */
export const SETTINGS_FILE = 'deploy/settings.json';
