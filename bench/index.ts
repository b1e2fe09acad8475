/**
 * `npm run bench`: every benchmark of the project, each reported as ratios against a baseline
 * measured in the same run. Speed is measured here, never asserted in unit tests.
 */
import { printTable } from './measure.ts';
import { runRuntimeBench } from './runtime.bench.ts';

const only = process.argv[2];

if (!only || only === 'runtime') printTable('Tool runtime: success and failure path (issue 2)', await runRuntimeBench());
