/**
 * The smoke test as a Cloudflare Worker: workerd runs the `test` handler (`workerd test`), where
 * code generation from strings is refused, so the JSON Schema interpreter must be the engine.
 * Bundled by `run-workerd.ts` with the conditions a Worker bundler uses, without `nodejs_compat`.
 */
import { formatSmokeReport, runSmoke } from './smoke.ts';

export default {
  async test(): Promise<void> {
    const report = await runSmoke('workerd');
    const engineChecked = report.jsonSchemaEngine === 'cfworker';
    report.checks.push({
      name: 'code generation is refused, so the interpreter validated',
      ok: engineChecked,
      ...(engineChecked ? {} : { got: report.jsonSchemaEngine }),
    });
    report.ok = report.ok && engineChecked;
    console.log(formatSmokeReport(report));
    if (!report.ok) throw new Error('the workerd smoke test failed');
  },
};
