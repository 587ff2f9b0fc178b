# zsh -f zsh-complete.zsh SCRIPT OUT LINE
# Types LINE and a Tab into an interactive zsh (on a pseudo-terminal, zsh/zpty) that has loaded the completion
# SCRIPT, and writes every candidate the completion offers to OUT, one a line; OUT.done marks the end.
zmodload zsh/zpty || exit 2
local script=$1 out=$2 line=$3
zpty completing zsh -f -i
zpty -w completing "autoload -U compinit && compinit -u -D && source ${(q)script}"
# Each candidate the completion functions add (not the calls that only ask, with -O, -A or -D) goes to OUT.
zpty -w completing "compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi;" \
  "local -a hits; builtin compadd -A hits \"\$@\"; (( \$#hits )) && print -rl -- \"\${hits[@]}\" >> ${(q)out}; builtin compadd \"\$@\" }"
zpty -w completing "LISTMAX=100000; zstyle ':completion:*' list-prompt ''"
zpty -n -w completing "$line"$'\t'
sleep 1
# Typed after the Tab, so it runs once the completion is over.
zpty -n -w completing $'\C-u'"print -r -- done >> ${(q)out}.done"$'\n'
local i
for i in {1..200}; do [[ -e $out.done ]] && break; sleep 0.1; done
zpty -d completing
[[ -e $out.done ]]
