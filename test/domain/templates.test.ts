import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../lambdas/domain/errors.ts';
import { smsShape } from '../../lambdas/domain/sms-shape.ts';
import {
  type TemplateDefinition,
  TemplateDefinitionError,
  TemplateRenderError,
} from '../../lambdas/domain/template.ts';
import {
  createTemplateCatalog,
  lintTemplate,
  templateBodies,
} from '../../lambdas/domain/template-catalog.ts';
import { renderEmail, renderSms } from '../../lambdas/domain/template-render.ts';
import { checkVariables } from '../../lambdas/domain/template-variables.ts';
import { templateCatalog } from '../../templates/catalog.ts';

const labResult = templateCatalog.lookup('lab-result-ready', 'v3')!;
const reminder = templateCatalog.lookup('appointment-reminder', 'v1')!;

/** Independent of the parser under test: every name inside `{{…}}`, `{{#…}}` or `{{/…}}`. */
function placeholderNames(body: string): string[] {
  return [...body.matchAll(/\{\{[#/]?([^{}]*)\}\}/g)].map((m) => m[1] ?? '');
}

function definition(overrides: Partial<TemplateDefinition>): TemplateDefinition {
  return {
    id: 'test-template',
    version: 'v1',
    description: 'test',
    variables: { firstName: { type: 'string', required: true } },
    sms: { text: 'Hi {{firstName}}' },
    ...overrides,
  };
}

describe('template catalog self-check', () => {
  const templates = templateCatalog.list();

  it('ships lab-result-ready v3 and more than one template', () => {
    // Assess
    expect(labResult).toBeDefined();
    expect(labResult.variables.firstName).toMatchObject({ type: 'string', required: true });
    expect(labResult.variables.portalUrl).toMatchObject({ type: 'https_url', required: false });
    expect(labResult.email).toBeDefined();
    expect(labResult.sms).toBeDefined();
    expect(templates.length).toBeGreaterThan(1);
  });

  it.each(templates.map((t) => [`${t.id} ${t.version}`, t] as const))(
    '%s: every placeholder is declared and every declared variable is used',
    (_, template) => {
      // Prepare
      const declared = Object.keys(template.variables);
      const used = new Set(templateBodies(template).flatMap(({ body }) => placeholderNames(body)));

      // Assess
      for (const name of used) expect(declared, `placeholder ${name}`).toContain(name);
      for (const [name, spec] of Object.entries(template.variables)) {
        if (spec.required) expect(used, `required variable ${name}`).toContain(name);
      }
      expect(lintTemplate(template)).toEqual([]);
    },
  );

  it('has unique (id, version) pairs', () => {
    // Act
    const keys = templates.map((t) => `${t.id} ${t.version}`);

    // Assess
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('freezes released versions', () => {
    // Assess
    for (const template of templates) {
      expect(Object.isFrozen(template)).toBe(true);
      expect(Object.isFrozen(template.variables)).toBe(true);
      expect(Object.isFrozen(template.email)).toBe(true);
      expect(Object.isFrozen(template.sms)).toBe(true);
      for (const spec of Object.values(template.variables)) expect(Object.isFrozen(spec)).toBe(true);
    }
    expect(() => {
      (labResult.sms as { text: string }).text = 'changed';
    }).toThrow(TypeError);
  });

  it('finds nothing for unknown ids, versions and prototype names', () => {
    // Assess
    expect(templateCatalog.lookup('lab-result-ready', 'v2')).toBeUndefined();
    expect(templateCatalog.lookup('no-such-template', 'v1')).toBeUndefined();
    expect(templateCatalog.lookup('__proto__', 'v1')).toBeUndefined();
    expect(templateCatalog.lookup('constructor', '')).toBeUndefined();
  });

  it('lintTemplate reports undeclared placeholders, unused variables and syntax errors', () => {
    // Prepare
    const cases: [TemplateDefinition, RegExp][] = [
      [definition({ sms: { text: 'Hi {{firstName}} {{lastName}}' } }), /undeclared variable lastName/],
      [
        definition({ sms: { text: 'Hi {{#nickname}}x{{/nickname}} {{firstName}}' } }),
        /undeclared variable nickname/,
      ],
      [definition({ sms: { text: 'Hello' } }), /firstName is declared but no body uses it/],
      [
        definition({
          variables: {
            firstName: { type: 'string', required: true },
            url: { type: 'https_url', required: false },
          },
          sms: { text: 'Hi {{firstName}} {{url}}' },
        }),
        /optional variable url outside/,
      ],
      [definition({ sms: { text: 'Hi {{ firstName }}' } }), /malformed tag/],
      [definition({ sms: { text: 'Hi {firstName}}' } }), /malformed tag/],
      [definition({ sms: { text: '{{#firstName}}Hi {{firstName}}' } }), /unclosed/],
      [definition({ sms: { text: 'Hi {{firstName}}{{/firstName}}' } }), /unexpected/],
      [definition({ sms: { text: 'Hi {{constructor}} {{firstName}}' } }), /undeclared variable constructor/],
      [definition({ version: '3' }), /version/],
      [definition({ id: 'Lab Result' }), /kebab-case/],
      [definition({ sms: undefined }), /no channel body/],
      [definition({ disclaimer: { sms: 'Reply {{STOP}}' } }), /static text/],
      [
        definition({ email: { subject: 'Hi\n{{firstName}}', text: 'x {{firstName}}', html: 'x' } }),
        /single line/,
      ],
    ];

    // Act / Assess
    for (const [template, problem] of cases) expect(lintTemplate(template).join('\n')).toMatch(problem);
  });

  it('createTemplateCatalog refuses duplicates and invalid definitions', () => {
    // Assess
    expect(() => createTemplateCatalog([definition({}), definition({})])).toThrow(/defined more than once/);
    expect(() => createTemplateCatalog([definition({ sms: { text: '{{oops}}' } })])).toThrow(
      TemplateDefinitionError,
    );
  });
});

describe('checkVariables', () => {
  const secret = 'Zyxwvut-Secret-Value';

  it('accepts a valid set, with or without the optional variable', () => {
    // Assess
    expect(checkVariables(labResult, { firstName: 'Ada' })).toEqual([]);
    expect(
      checkVariables(labResult, { firstName: 'Ada', portalUrl: 'https://portal.example.org/results' }),
    ).toEqual([]);
    expect(checkVariables(labResult, { firstName: 'Ada', portalUrl: null })).toEqual([]);
    expect(checkVariables(labResult, { firstName: 'Ada', portalUrl: '' })).toEqual([]);
  });

  it.each([
    ['missing required', { portalUrl: 'https://portal.example.org' }, 'variables.firstName', 'missing'],
    ['blank required', { firstName: '   ' }, 'variables.firstName', 'missing'],
    ['wrong type', { firstName: 42 }, 'variables.firstName', 'wrong_type'],
    ['object instead of string', { firstName: { secret } }, 'variables.firstName', 'wrong_type'],
    [
      'http URL',
      { firstName: 'Ada', portalUrl: `http://${secret}.example.org` },
      'variables.portalUrl',
      'not_https_url',
    ],
    [
      'javascript URL',
      { firstName: 'Ada', portalUrl: 'javascript:alert(1)' },
      'variables.portalUrl',
      'not_https_url',
    ],
    ['not a URL', { firstName: 'Ada', portalUrl: secret }, 'variables.portalUrl', 'not_https_url'],
    [
      'URL with credentials',
      { firstName: 'Ada', portalUrl: `https://user:${secret}@portal.example.org` },
      'variables.portalUrl',
      'not_https_url',
    ],
    ['too long', { firstName: secret.repeat(6) }, 'variables.firstName', 'too_long'],
    ['unknown variable', { firstName: 'Ada', firstname: secret }, 'variables.firstname', 'unknown_variable'],
    [
      'control character',
      { firstName: `Ada\r\nBcc: ${secret}` },
      'variables.firstName',
      'invalid_characters',
    ],
    ['bidi override', { firstName: `Ada\u202E${secret}` }, 'variables.firstName', 'invalid_characters'],
  ])('%s → %s %s', (_, variables, path, code) => {
    // Act
    const violations = checkVariables(labResult, variables);

    // Assess
    expect(violations).toEqual([expect.objectContaining({ path, code })]);
    for (const violation of violations) {
      expect(violation.message).not.toContain(secret);
      expect(violation.message).not.toContain('Ada');
    }
  });

  it('counts maxLength in code points, so an emoji name is not penalised twice', () => {
    // Prepare
    const hundredEmoji = '😀'.repeat(100);

    // Assess
    expect(checkVariables(labResult, { firstName: hundredEmoji })).toEqual([]);
    expect(checkVariables(labResult, { firstName: `${hundredEmoji}a` })).toEqual([
      expect.objectContaining({ code: 'too_long' }),
    ]);
  });

  it('does not treat prototype names as declared variables', () => {
    // Prepare
    const variables = JSON.parse('{"firstName":"Ada","__proto__":"x","constructor":"y"}') as Record<
      string,
      unknown
    >;

    // Act
    const violations = checkVariables(labResult, variables);

    // Assess
    expect(violations.map((v) => [v.path, v.code])).toEqual([
      ['variables.__proto__', 'unknown_variable'],
      ['variables.constructor', 'unknown_variable'],
    ]);
  });

  it.each([
    ['2026-12-01', true],
    ['2028-02-29', true],
    ['2026-12-01T09:00', true],
    ['2026-12-01T09:00:00Z', true],
    ['2026-12-01T09:00:00.123+01:00', true],
    ['2026-02-29', false],
    ['2026-13-01', false],
    ['2026-12-01T24:00', false],
    ['01/12/2026', false],
    ['2026-12-01 09:00', false],
    ['tomorrow', false],
  ])('date %s valid=%s', (appointmentDate, valid) => {
    // Act
    const violations = checkVariables(reminder, { firstName: 'Ada', appointmentDate });

    // Assess
    expect(violations).toEqual(valid ? [] : [expect.objectContaining({ code: 'wrong_type' })]);
    for (const violation of violations) expect(violation.message).not.toContain(appointmentDate);
  });

  it('reports every violation, contract order first, then unknown names', () => {
    // Act
    const violations = checkVariables(reminder, { zzz: 1, clinicName: 7 });

    // Assess
    expect(violations.map((v) => `${v.path}:${v.code}`)).toEqual([
      'variables.firstName:missing',
      'variables.appointmentDate:missing',
      'variables.clinicName:wrong_type',
      'variables.zzz:unknown_variable',
    ]);
  });
});

describe('rendering', () => {
  it('escapes HTML in the html body only', () => {
    // Prepare
    const firstName = '<script>alert("x")</script>';

    // Act
    const email = renderEmail(labResult, { firstName });

    // Assess
    expect(email.html).not.toContain('<script>');
    expect(email.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(email.text).toContain(`Hello ${firstName},`);
    expect(email.subject).toBe('Your lab result is ready');
  });

  it('renders the optional section only when the variable is present', () => {
    // Prepare
    const portalUrl = 'https://portal.example.org/results?a=1&b=2';

    // Act
    const without = renderEmail(labResult, { firstName: 'Ada' });
    const withUrl = renderEmail(labResult, { firstName: 'Ada', portalUrl });
    const smsWithout = renderSms(labResult, { firstName: 'Ada' });
    const smsWith = renderSms(labResult, { firstName: 'Ada', portalUrl });

    // Assess
    expect(without.html).not.toContain('<a ');
    expect(without.text).not.toContain('https://');
    expect(withUrl.html).toContain('<a href="https://portal.example.org/results?a=1&amp;b=2">');
    expect(withUrl.text).toContain(portalUrl);
    expect(smsWithout.text).not.toContain('https://');
    expect(smsWith.text).toContain(` ${portalUrl}`);
    expect(renderSms(reminder, { firstName: 'Ada', appointmentDate: '2026-12-01' }).text).not.toContain(
      ' at ',
    );
    expect(
      renderSms(reminder, { firstName: 'Ada', appointmentDate: '2026-12-01', clinicName: 'North Clinic' })
        .text,
    ).toContain('on 2026-12-01 at North Clinic.');
  });

  it('appends the disclaimers', () => {
    // Act
    const email = renderEmail(labResult, { firstName: 'Ada' });
    const sms = renderSms(labResult, { firstName: 'Ada' });

    // Assess
    const emailDisclaimer = labResult.disclaimer?.email ?? '';
    expect(emailDisclaimer).toMatch(/Do not reply/);
    expect(email.text.trimEnd().endsWith(emailDisclaimer)).toBe(true);
    expect(email.html).toMatch(/<p [^>]*>This message was sent by [^<]*<\/p>\n<\/body>/);
    expect(email.html).toContain('care provider&#39;s');
    expect(sms.text.endsWith('\nReply STOP to opt out.')).toBe(true);
  });

  it('points every message to the portal instead of carrying the result', () => {
    // Act
    const email = renderEmail(labResult, { firstName: 'Ada' });
    const sms = renderSms(labResult, { firstName: 'Ada' });

    // Assess
    for (const text of [email.text, email.html, sms.text]) expect(text).toMatch(/portal/i);
  });

  it('renders the lab-result-ready v3 SMS for Ada as one GSM-7 segment', () => {
    // Act
    const sms = renderSms(labResult, { firstName: 'Ada' });

    // Assess
    expect(smsShape(sms.text)).toMatchObject({ encoding: 'GSM-7', segments: 1 });
  });

  it('throws TemplateRenderError for a missing channel body or variables that break the contract', () => {
    // Prepare
    const smsOnly = definition({});

    // Act / Assess
    expect(() => renderEmail(smsOnly, { firstName: 'Ada' })).toThrow(TemplateRenderError);
    const error = (() => {
      try {
        renderSms(labResult, { firstName: 'Ada', portalUrl: 'http://secret.example.org' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(TemplateRenderError);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'template_variables_invalid', templateId: 'lab-result-ready' });
    expect((error as Error).message).not.toContain('secret');
    expect(() => renderSms(smsOnly, { firstName: 'Ada' })).not.toThrow();
    expect(() => renderSms(definition({ sms: { text: 'Hi {{firstName' } }), { firstName: 'Ada' })).toThrow(
      expect.objectContaining({ code: 'template_syntax_error' }),
    );
  });
});

describe('smsShape', () => {
  it.each([
    ['empty', '', 'GSM-7', 0, 0],
    ['160 GSM-7', 'a'.repeat(160), 'GSM-7', 1, 160],
    ['161 GSM-7', 'a'.repeat(161), 'GSM-7', 2, 161],
    ['306 GSM-7', 'a'.repeat(306), 'GSM-7', 2, 306],
    ['307 GSM-7', 'a'.repeat(307), 'GSM-7', 3, 307],
    ['80 extension chars = 160 septets', '€'.repeat(80), 'GSM-7', 1, 160],
    ['81 extension chars = 162 septets', '€'.repeat(81), 'GSM-7', 2, 162],
    ['159 + one extension char', `${'a'.repeat(159)}{`, 'GSM-7', 2, 161],
    ['escape pair not split across parts', `${'a'.repeat(152)}€${'a'.repeat(152)}`, 'GSM-7', 3, 306],
    ['GSM-7 accented letters', 'Ça va? Ñandu, Øre, ß, Æsir, Δ', 'GSM-7', 1, 29],
    ['70 UCS-2', 'ж'.repeat(70), 'UCS-2', 1, 70],
    ['71 UCS-2', 'ж'.repeat(71), 'UCS-2', 2, 71],
    ['134 UCS-2', 'ж'.repeat(134), 'UCS-2', 2, 134],
    ['135 UCS-2', 'ж'.repeat(135), 'UCS-2', 3, 135],
    ['emoji forces UCS-2', `${'a'.repeat(100)}😀`, 'UCS-2', 2, 102],
    ['surrogate pair not split across parts', `${'ж'.repeat(66)}😀${'ж'.repeat(66)}`, 'UCS-2', 3, 134],
    ['curly apostrophe forces UCS-2', 'It’s ready', 'UCS-2', 1, 10],
    ['lower-case ç is not GSM-7', 'ç', 'UCS-2', 1, 1],
  ])('%s', (_, text, encoding, segments, characters) => {
    // Act / Assess
    expect(smsShape(text)).toEqual({ encoding, segments, characters });
  });

  const gsmChar = fc.constantFrom(
    ...'@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
    ...'\f^{}\\[~]|€',
  );

  it('never reports UCS-2 for a GSM-7-only string', () => {
    fc.assert(
      fc.property(fc.array(gsmChar, { maxLength: 400 }), (chars) => {
        expect(smsShape(chars.join('')).encoding).toBe('GSM-7');
      }),
    );
  });

  it('never decreases the segment count as text grows', () => {
    // Mostly GSM-7 so long texts cross the multipart limits, with occasional UCS-2 and astral
    // characters (and lone surrogates) to exercise the encoding switch and pair handling.
    const piece = fc.oneof(
      { weight: 8, arbitrary: gsmChar },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.constantFrom('😀', 'ж', '\uD83D', '\uDE00', '’') },
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 400 }), (pieces) => {
        let text = '';
        let previous = smsShape(text).segments;
        for (const p of pieces) {
          text += p;
          const { segments } = smsShape(text);
          expect(segments).toBeGreaterThanOrEqual(previous);
          previous = segments;
        }
      }),
      { numRuns: 200 },
    );
  });
});
