# scripts/apt.sh - installing Debian packages, shared by scripts/lib.sh, scripts/pgbuild and
# scripts/citusbuild (sourced; defines functions and SUDO only).
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
# The packages of the list given that are not installed, one a line (none: nothing printed).
dp_missing_packages() {
	local p
	for p in "$@"; do
		[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"install ok installed"* ]] || echo "$p"
	done
}
# Installs the packages given that are missing, without an apt-get update (for a caller that made
# one), waiting up to 10 minutes for another apt-get or dpkg's lock instead of failing on it;
# nothing runs (and no lock is taken) when all are installed.  Returns apt-get's status.
dp_apt_install() {
	local missing
	missing=$(dp_missing_packages "$@")
	[ -n "$missing" ] || return 0
	echo "apt-get install $(echo $missing)"
	# shellcheck disable=SC2086 # one package a word
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
		--no-install-recommends $missing
}
