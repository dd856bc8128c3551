#!/bin/sh
# Rebuild the JupyterLab extension into jupyter_sandbox/labextension/ (the
# bundle committed in the Python package) and record the hash of its sources.
# Needs node >= 20 and npm; the npm registry is the only network it uses.
set -eu
cd "$(dirname "$0")"
[ -d node_modules/@jupyter/builder ] || npm ci --no-audit --no-fund
# @jupyter/builder's own script, with the core-meta it ships: no download.
node node_modules/@jupyter/builder/lib/build-labextension.js \
  --core-package-file node_modules/@jupyterlab/core-meta/core.package.json .
cat > ../jupyter_sandbox/labextension/install.json <<'JSON'
{
  "packageManager": "python",
  "packageName": "jupyter_sandbox",
  "uninstallInstructions": "Use your Python package manager (pip, conda, etc.) to uninstall the package jupyter_sandbox"
}
JSON
python3 sources_hash.py --write
