// Lists functions whose body spans more than 200 lines and functions with more than
// four parameters in src/ (tests and the shipped contract suites excluded). Usage: npx tsx scripts/scan-functions.ts
import ts from 'typescript';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const MAX_LINES = 200;
const MAX_PARAMS = 4;

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (path === join('src', 'testing', 'contract')) continue;
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) yield path;
  }
}

function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))) return parent.name.getText();
  return '<anonymous>';
}

const findings: string[] = [];
for (const path of sourceFiles('src')) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = line(node.body.getEnd()) - line(node.body.getStart()) + 1;
      const at = `${path}:${line(node.getStart())} ${nameOf(node)}`;
      if (lines > MAX_LINES) findings.push(`${at}: ${lines} lines`);
      if (node.parameters.length > MAX_PARAMS) findings.push(`${at}: ${node.parameters.length} parameters`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
for (const finding of findings) console.log(finding);
process.exitCode = findings.length > 0 ? 1 : 0;
