// Prints one plain closing line, "jest: N passed, N failed, N skipped", for CI log readers.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const failed = numFailedTests + (results.numRuntimeErrorTestSuites || 0);
    process.stdout.write(
      `\njest: ${numPassedTests} passed, ${failed} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
