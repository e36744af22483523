#!/bin/sh
# Install the npm programs the MCP and external-agent tests run (pinned in
# tests/npm/package-lock.json) into tests/npm/node_modules. npm's own cache
# (~/.npm) keeps them between runs where the machine keeps it. Needs Node.js
# and npm: the machine's, or Debian's packages (installed here when missing).
set -eu
cd "$(dirname "$0")/../tests/npm"
if ! command -v npm >/dev/null 2>&1; then
	[ "$(id -u)" -eq 0 ] || {
		echo "install-npm: npm not found; install Debian's nodejs and npm" >&2
		exit 1
	}
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	    --no-install-recommends nodejs npm
fi
# The lock file pins every version; --ignore-scripts is not used because
# Claude Code's postinstall puts its native program in place.
npm ci --no-audit --no-fund --loglevel=error
# The sandbox and the unprivileged test user read these.
chmod -R a+rX node_modules
echo "install-npm: $(ls node_modules/.bin | tr '\n' ' ')"
