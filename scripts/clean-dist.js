// Removes dist/ before a build (`npm run build`, which `npm pack` runs as prepack), with Node only:
// `rm -rf` is not a command of Windows' cmd.exe, where npm runs the scripts there.
require('node:fs').rmSync(require('node:path').join(__dirname, '..', 'dist'), {
  recursive: true,
  force: true,
});
