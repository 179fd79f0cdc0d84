# bash completion for oomfix                                     -*- shell-script -*-
# Subcommands, options, files, fix ids after `fix JOB` (from `oomfix fix --list JOB`) and the
# AI Toolkit jobs as `aitk:NAME` (from `oomfix jobs --names`). Works with or without the
# bash-completion package: source it, or let bash-completion load it from
# share/bash-completion/completions.

_oomfix_aitk_jobs() { # prints aitk:NAME for each job; nothing when the database is not there
	local cmd=$1 dir=$2
	if [[ -n $dir ]]; then
		"$cmd" jobs --names --aitk "$dir" </dev/null 2>/dev/null
	else
		"$cmd" jobs --names </dev/null 2>/dev/null
	fi | while IFS= read -r n; do [[ -n $n ]] && printf 'aitk:%s\n' "$n"; done
}

_oomfix_files() { # job and log files, directories to descend into
	local IFS=$'\n'
	compopt -o filenames 2>/dev/null
	COMPREPLY+=($(compgen -f -- "$1"))
}

_oomfix() {
	# Words split on blanks only, so that aitk:NAME stays one word whatever COMP_WORDBREAKS says.
	local line=${COMP_LINE:0:COMP_POINT}
	local -a w
	read -ra w <<< "$line"
	[[ $line =~ [[:space:]]$ ]] && w+=("")
	local cur=${w[${#w[@]} - 1]} prev=""
	(( ${#w[@]} > 1 )) && prev=${w[${#w[@]} - 2]}
	local cmd=${w[0]} sub="" aitk="" i
	local -a pos=()
	local -A takes_arg=([--job]=1 [--log]=1 [-o]=1 [--output]=1 [--aitk]=1 [--theme]=1
		[--script]=1 [--size]=1 [--max-tries]=1 [--probe]=1 [--grace]=1 [--events]=1
		[--vram]=1 [--gpu]=1)
	local dashdash=0
	for ((i = 1; i < ${#w[@]} - 1; i++)); do
		local a=${w[i]}
		if ((dashdash)); then pos+=("$a"); continue; fi
		if [[ $a == -- ]]; then dashdash=1; continue; fi
		if [[ ${takes_arg[$a]:-} ]]; then
			[[ $a == --aitk ]] && aitk=${w[i + 1]}
			((i++))
			continue
		fi
		[[ $a == -* ]] && continue
		if [[ -z $sub ]]; then sub=$a; else pos+=("$a"); fi
	done
	COMPREPLY=()
	local -a words=()

	case $prev in
	--log | --job | -o | --output | --script) _oomfix_files "$cur"; _oomfix_fixup "$cur"; return ;;
	--aitk) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--theme) COMPREPLY=($(compgen -W "default-dark light high-contrast mono" -- "$cur")); return ;;
	--size) COMPREPLY=($(compgen -W "80x24 100x30 120x40" -- "$cur")); return ;;
	--max-tries | --probe) return ;;
	--vram) COMPREPLY=($(compgen -W "8 12 16 24 32 40 48 80 96" -- "$cur")); return ;;
	--gpu) COMPREPLY=($(compgen -W "0 1 2 3 4 5 6 7" -- "$cur")); return ;;
	esac
	if ((dashdash)) && [[ $sub == retry ]]; then # the training command after --
		if ((${#pos[@]} <= 1)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			_oomfix_files "$cur"
		fi
		return
	fi

	local subs="get set diagnose plan fix estimate measurements jobs queue restore runs retry"
	case $sub in
	"")
		if [[ $cur == -* ]]; then
			words=(--help --version --theme --no-color --vram --aitk)
		else
			COMPREPLY=($(compgen -W "$subs" -- "$cur"))
			[[ $cur == a* ]] && COMPREPLY+=($(compgen -W "$(_oomfix_aitk_jobs "$cmd" "$aitk")" -- "$cur"))
			_oomfix_files "$cur"
			_oomfix_fixup "$cur"
			return
		fi ;;
	diagnose) words=(--job --json --follow --help) ;;
	plan) words=(--log --json --help) ;;
	fix) words=(--log --diff --keep-batch --no-keep-batch -o --output -i --in-place --force --list --help) ;;
	get | set) words=(-o --output -i --in-place --help) ;;
	estimate) words=(--vram --gpu --log --json --steps --apply -o --output -i --in-place --force --help) ;;
	measurements) words=(--json --export --help) ;;
	jobs) words=(--aitk --json --names --help) ;;
	queue) words=(--aitk --help) ;;
	restore) words=(--force --first --aitk --help) ;;
	runs) words=(--aitk --json --help) ;;
	retry) words=(--max-tries --probe --grace --log --events --vram --aitk --help --) ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
		return
	fi
	case $sub in
	fix)
		if ((${#pos[@]} >= 1)); then
			# After JOB: the fixes that would still change it.
			COMPREPLY=($(compgen -W "$("$cmd" fix --list "${pos[0]}" </dev/null 2>/dev/null)" -- "$cur"))
			return
		fi ;;
	diagnose) _oomfix_files "$cur"; _oomfix_fixup "$cur"; return ;;
	jobs) return ;;
	esac
	# A job: a file or an AI Toolkit job.
	if ((${#pos[@]} == 0)) || [[ $sub == "" ]]; then
		[[ $cur == a* || -z $cur ]] && COMPREPLY+=($(compgen -W "$(_oomfix_aitk_jobs "$cmd" "$aitk")" -- "$cur"))
	fi
	_oomfix_files "$cur"
	_oomfix_fixup "$cur"
}

# bash splits words at ':' (COMP_WORDBREAKS), so for "aitk:na" it replaces only "na": drop what
# comes before the last ':' from each candidate.
_oomfix_fixup() {
	local cur=$1
	if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
		local pre=${cur%"${cur##*:}"} i
		for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$pre"}; done
	fi
}

complete -F _oomfix oomfix
