# A terminal for the end-to-end tests of what a person sees: a private
# tmux server (its own socket, no configuration file) running one shell in
# a window of a known size. Sourced after lib.bash; the EXIT trap stops
# the server, and with it whatever still runs in the window.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

command -v tmux >/dev/null || fail "tmux is not installed: run make deps"
TMUX_SOCKET=ebprof-e2e-$$
tmux_cmd() {
	tmux -L "$TMUX_SOCKET" -f /dev/null "$@"
}
trap 'tmux_cmd kill-server 2>/dev/null; cleanup' EXIT

# tmux_start COLUMNS ROWS: one window with a plain shell whose prompt is
# "PROMPT$ ", in the worktree.
tmux_start() {
	tmux_cmd new-session -d -x "$1" -y "$2" \
		"env -i PATH=$PATH HOME=/root TERM=tmux-256color PS1='PROMPT\$ ' bash --norc --noprofile" ||
		fail "cannot start tmux"
	tmux_cmd set-option -g window-size manual >/dev/null 2>&1
	wait_for 5 tmux_has '^PROMPT\$' || fail "the shell in tmux shows no prompt"
	tmux_cmd send-keys "cd $ROOT" Enter
}

# tmux_type TEXT: types TEXT and Enter into the window.
tmux_type() {
	tmux_cmd send-keys -l "$1"
	tmux_cmd send-keys Enter
}

# tmux_screen: what the window shows now, one line per row.
tmux_screen() {
	tmux_cmd capture-pane -p
}

# tmux_has REGEX: true when the window shows a line matching REGEX.
tmux_has() {
	tmux_screen | grep -Eq -- "$1"
}
