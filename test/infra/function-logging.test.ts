/**
 * Every function's logging configuration (lib/constructs/function-logging.ts): where Lambda has
 * advanced logging controls, JSON log format with the system log level at WARN (no START, END and
 * REPORT lines: about 300 B per invocation) and the application level INFO, given to Powertools
 * by Lambda alone (AWS_LAMBDA_LOG_LEVEL, no POWERTOOLS_LOG_LEVEL beside it); elsewhere Lambda's
 * text format and POWERTOOLS_LOG_LEVEL, one level either way.
 */
import { Aws } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { APPLICATION_LOG_LEVEL, functionLogging } from '../../lib/constructs/function-logging.ts';
import { type Synthesized, synthesizeIn } from './synth.ts';

interface FunctionResource {
  readonly Properties: {
    readonly LoggingConfig?: Record<string, unknown>;
    readonly Environment?: { readonly Variables?: Record<string, unknown> };
  };
}

function functionsOf(template: Template): [string, FunctionResource][] {
  return Object.entries(template.findResources('AWS::Lambda::Function')) as [string, FunctionResource][];
}

describe('functions’ logging by Region (lib/constructs/function-logging.ts)', () => {
  it('advanced logging controls in the commercial partition; text in GovCloud, China, isolated and token Regions', () => {
    for (const region of ['us-east-1', 'eu-west-1', 'ap-southeast-6', 'ca-west-1', 'sa-east-1'])
      expect(functionLogging(region), region).toBe('advanced');
    // GovCloud: no JSON log format, hence no levels; China and the isolated Regions: not confirmed.
    for (const region of ['us-gov-west-1', 'us-gov-east-1', 'cn-north-1', 'cn-northwest-1', 'us-iso-east-1'])
      expect(functionLogging(region), region).toBe('text');
    expect(functionLogging('xx-nowhere-9')).toBe('text');
    // The environment-agnostic synth deploys anywhere, GovCloud included.
    expect(functionLogging(Aws.REGION)).toBe('text');
  });
});

describe('synthesized: every function’s LoggingConfig', () => {
  let commercial: Synthesized;
  let govCloud: Synthesized;
  beforeAll(() => {
    commercial = synthesizeIn('us-east-1');
    govCloud = synthesizeIn('us-gov-west-1');
  }, 240_000);

  it('us-east-1: JSON, system WARN (no START/END/REPORT), application INFO, its own log group; no POWERTOOLS_LOG_LEVEL', () => {
    const functions = functionsOf(commercial.deliveryTemplate);
    expect(functions.length).toBeGreaterThan(0);
    expect(functions).toHaveLength(Object.keys(commercial.delivery.functions).length);
    for (const [id, fn] of functions) {
      expect(fn.Properties.LoggingConfig, id).toEqual({
        LogFormat: 'JSON',
        SystemLogLevel: 'WARN',
        ApplicationLogLevel: APPLICATION_LOG_LEVEL,
        LogGroup: { Ref: expect.any(String) },
      });
      expect(fn.Properties.Environment?.Variables, id).not.toHaveProperty('POWERTOOLS_LOG_LEVEL');
      expect(fn.Properties.Environment?.Variables, id).not.toHaveProperty('AWS_LAMBDA_LOG_LEVEL');
    }
    for (const fn of Object.values(commercial.delivery.functions)) expect(fn.logging).toBe('advanced');
  });

  it('us-gov-west-1: the text format (its log group only) and POWERTOOLS_LOG_LEVEL INFO', () => {
    const functions = functionsOf(govCloud.deliveryTemplate);
    expect(functions.length).toBeGreaterThan(0);
    expect(functions).toHaveLength(Object.keys(govCloud.delivery.functions).length);
    for (const [id, fn] of functions) {
      expect(fn.Properties.LoggingConfig, id).toEqual({ LogGroup: { Ref: expect.any(String) } });
      expect(fn.Properties.Environment?.Variables?.POWERTOOLS_LOG_LEVEL, id).toBe(APPLICATION_LOG_LEVEL);
    }
  });
});
