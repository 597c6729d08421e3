// Prints one plain closing line, "jest: N passed, N failed, N skipped", for CI log readers, and
// before it the slowest files of the run (wall seconds each, and their sum), so a CI log shows
// where a slow run spent its time. With TQ_TIMINGS_FILE set, every file's seconds go to that file
// as JSON lines ({ file, seconds, tests }), appended, for comparing runs.
const { appendFileSync } = require('node:fs');
const { relative } = require('node:path');

const SLOWEST = 12;

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults.map((each) => ({
      file: relative(this.rootDir, each.testFilePath),
      seconds: Math.round((each.perfStats.end - each.perfStats.start) / 100) / 10,
      tests: each.numPassingTests + each.numFailingTests,
    }));
    if (process.env.TQ_TIMINGS_FILE) {
      appendFileSync(
        process.env.TQ_TIMINGS_FILE,
        files.map((each) => JSON.stringify(each) + '\n').join(''),
      );
    }
    const total = files.reduce((sum, each) => sum + each.seconds, 0);
    if (files.length > 1) {
      process.stdout.write(`\nslowest of ${files.length} files (${Math.round(total)} s in all):\n`);
      for (const each of [...files].sort((a, b) => b.seconds - a.seconds).slice(0, SLOWEST)) {
        process.stdout.write(`  ${String(each.seconds).padStart(6)} s  ${each.file}\n`);
      }
    }
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const failed = numFailedTests + (results.numRuntimeErrorTestSuites || 0);
    process.stdout.write(
      `\njest: ${numPassedTests} passed, ${failed} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
