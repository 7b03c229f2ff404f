// Prints one plain closing line, `Tests: N passed, N failed`, that CI reads as the verdict.
import process from 'node:process';
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `Tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed`;
    process.stdout.write(`\n${skipped > 0 ? `${line}, ${skipped} skipped` : line}\n`);
  }
}
