// Plain functions over ISO 8601 durations: settings (HOT_RETENTION), fallbacks (`within`).
const DURATION = /^P(?:(\d{1,3})D)?(?:T(?:(\d{1,4})H)?(?:(\d{1,6})M)?(?:(\d{1,7})S)?)?$/;

/**
 * An ISO 8601 duration of days, hours, minutes and seconds (`PT10M`, `PT1H30M`, `P1D`), in ms;
 * undefined when it is not one. Years, months and weeks are refused: their length in time is not
 * fixed (a month is 28 to 31 days), and every duration here is a time
 * from an instant (intake, a resolution).
 */
export function parseIsoDuration(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return undefined;
  const [, d = '0', h = '0', min = '0', s = '0'] = m;
  return ((Number(d) * 24 + Number(h)) * 60 + Number(min)) * 60_000 + Number(s) * 1000;
}

/** `within` in ISO 8601 form again, for records and messages (`PT10M`). */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const time = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  const body = `${d ? `${d}D` : ''}${time ? `T${time}` : ''}`;
  return body ? `P${body}` : 'PT0S';
}
