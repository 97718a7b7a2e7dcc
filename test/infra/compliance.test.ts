import { type App, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { compliancePacks } from '../../lib/nag.ts';
import { synthesize } from './synth.ts';

interface Finding {
  readonly rule: string;
  readonly path: string;
  readonly severity: string;
}

interface Ack {
  readonly rule: string;
  readonly reason: string;
  readonly path: string;
}

function findings(app: App): Finding[] {
  return compliancePacks().flatMap((pack) =>
    pack.validateScope(app).violations.flatMap((v) =>
      v.violatingResources.map((r) => ({
        rule: v.ruleName,
        path: r.constructPath ?? '',
        severity: v.severity ?? '',
      })),
    ),
  );
}

function acknowledgements(root: IConstruct): Ack[] {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) =>
        Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({
          rule: id.replace(/^annotation::/i, ''),
          reason,
          path: c.node.path,
        })),
      ),
  );
}

let acknowledged: App;
let raw: App;

beforeAll(() => {
  // cdk-nag reads the construct tree and the L1 properties, not the code: no bundling needed.
  acknowledged = synthesize({ bundle: false }).app;
  // The same app with every acknowledgement dropped: what the packs find on their own.
  const spy = vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => undefined);
  raw = synthesize({ bundle: false }).app;
  spy.mockRestore();
});

describe('cdk-nag (AwsSolutions, HIPAA.Security)', () => {
  it('leaves no unacknowledged finding, error or warning', () => {
    expect(findings(acknowledged)).toEqual([]);
  });

  it('gives every acknowledgement a specific reason', () => {
    const acks = acknowledgements(acknowledged);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.rule, ack.path).toMatch(/^(AwsSolutions|HIPAA\.Security)-[A-Za-z0-9]+(\[.+\])?$/);
      expect(ack.reason.length, `${ack.rule} at ${ack.path}`).toBeGreaterThanOrEqual(80);
    }
  });

  it('acknowledges wildcard findings one resource at a time, never a whole rule', () => {
    for (const ack of acknowledgements(acknowledged).filter((a) => a.rule.startsWith('AwsSolutions-IAM5'))) {
      expect(ack.rule).toMatch(/^AwsSolutions-IAM5\[Resource::.+\]$/);
    }
  });

  it('acknowledges nothing the packs would not find (no stale acknowledgements)', () => {
    const found = findings(raw);
    for (const ack of acknowledgements(acknowledged)) {
      const matched = found.some(
        (f) => f.rule === ack.rule && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)),
      );
      expect(matched, `${ack.rule} at ${ack.path}`).toBe(true);
    }
  });
});
