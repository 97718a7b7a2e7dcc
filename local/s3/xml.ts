/** S3's REST-XML answers, as the local store's front (./front.ts) writes them. */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** An HTTP answer, held whole (the front reads s3rver's answers whole too). */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export function xmlAnswer(status: number, body: string): Answer {
  return {
    status,
    headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId() },
    body: Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`),
  };
}

export function emptyAnswer(status: number): Answer {
  return { status, headers: { 'x-amz-request-id': requestId() }, body: Buffer.alloc(0) };
}

/** S3's error answer: `<Error>` with its code, message and fields; no body for HEAD, as S3 sends none. */
export function s3Error(
  method: string,
  status: number,
  code: string,
  message: string,
  fields: Readonly<Record<string, string>> = {},
): Answer {
  if (method === 'HEAD') return emptyAnswer(status);
  const extra = Object.entries(fields)
    .map(([name, value]) => element(name, value))
    .join('');
  return xmlAnswer(
    status,
    `<Error>${element('Code', code)}${element('Message', message)}${extra}${element('RequestId', requestId())}<HostId>local</HostId></Error>`,
  );
}

/** `<name>text</name>`, the text escaped. */
export function element(name: string, text: string | number | boolean): string {
  return `<${name}>${escapeXml(String(text))}</${name}>`;
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function unescapeXml(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every `<tag>…</tag>` text of a (small, SDK-written) request body, unescaped. */
export function elementTexts(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))].map((m) => unescapeXml(m[1] ?? ''));
}

function requestId(): string {
  return randomBytes(8).toString('hex').toUpperCase();
}
