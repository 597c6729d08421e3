// The Redis Cluster run's record of the module's Lua commands (tq*) this jest process sent, one
// name a line, appended to the file TQ_SCRIPT_TRACE names (set by global-setup.ts). The run's
// global teardown fails when a command of lib/ was never sent: the Cluster run runs a selection
// of the suites (test/cluster/jest.config.js), and this keeps every script in it, on the cluster.
// Patched in each test file's module registry: `sendCommand` of ioredis's Redis, Cluster and
// Pipeline (a MULTI is a pipeline).
const { appendFileSync } = require('node:fs');

const traceFile = process.env.TQ_SCRIPT_TRACE;
const sent = new Set();

function patch(Client) {
  const send = Client?.prototype?.sendCommand;
  if (!traceFile || !send || send.tqTraced) return;
  const traced = function (command, ...rest) {
    // A pipeline's or a MULTI's commands name their client's scripts.
    const scripts = this.isPipeline ? this.redis?.scriptsSet : this.scriptsSet;
    if (command.name === 'evalsha' && scripts) {
      const sha = String(command.args[0]);
      for (const name in scripts) {
        if (name.startsWith('tq') && scripts[name].sha === sha && !sent.has(name)) {
          sent.add(name);
          appendFileSync(traceFile, `${name}\n`);
        }
      }
    }
    return send.call(this, command, ...rest);
  };
  traced.tqTraced = true;
  Client.prototype.sendCommand = traced;
}

const ioredis = require('ioredis');
patch(ioredis.Redis);
patch(ioredis.Cluster);
patch(ioredis.Pipeline);
