import type { SmsShape } from './intent.ts';

// SMS length (3GPP TS 23.038 GSM 7-bit default alphabet): what a carrier bills for a text.

/** The basic table without ESC (0x1B), which is never a character of its own. */
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
/** Sent as ESC + code: two septets each. */
const GSM7_EXTENSION = new Set('\f^{}\\[~]|€');

const GSM7_SINGLE = 160;
/** 160 minus the 7 septets of the concatenation header (UDH). */
const GSM7_PART = 153;
const UCS2_SINGLE = 70;
const UCS2_PART = 67;

/**
 * Encoding and segment count a carrier will bill for `text`.
 * - GSM-7 when every character is in the default alphabet or its extension table; otherwise the
 *   whole message is UCS-2 (in practice UTF-16: astral characters take two code units).
 * - `characters` is the length in the encoding's units: septets for GSM-7 (an extension character
 *   counts 2), UTF-16 code units for UCS-2. That is the number compared with 160/153 or 70/67.
 * - Parts are packed greedily and an escape pair or a surrogate pair is never split across
 *   parts, so a long message can need one more part than `ceil(characters / 153)`.
 * - Empty text is 0 segments: there is nothing to send (providers reject an empty body).
 */
export function smsShape(text: string): SmsShape {
  const chars = [...text];
  const gsm = chars.every((c) => GSM7_BASIC.has(c) || GSM7_EXTENSION.has(c));
  // A lone surrogate is one code unit; a pair is one code point of length 2.
  const cost = gsm ? (c: string) => (GSM7_EXTENSION.has(c) ? 2 : 1) : (c: string) => c.length;
  const encoding = gsm ? 'GSM-7' : 'UCS-2';
  const single = gsm ? GSM7_SINGLE : UCS2_SINGLE;
  const part = gsm ? GSM7_PART : UCS2_PART;

  let characters = 0;
  for (const c of chars) characters += cost(c);
  if (characters === 0) return { encoding, segments: 0, characters };
  if (characters <= single) return { encoding, segments: 1, characters };

  let segments = 1;
  let used = 0;
  for (const c of chars) {
    const units = cost(c);
    if (used + units > part) {
      segments++;
      used = 0;
    }
    used += units;
  }
  return { encoding, segments, characters };
}
