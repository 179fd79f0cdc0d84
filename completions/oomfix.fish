# fish completion for oomfix: subcommands, options, files, fix ids after `fix JOB` (from
# `oomfix fix --list JOB`) and AI Toolkit jobs as aitk:NAME (from `oomfix jobs --names`).

set -l __oomfix_subs get set diagnose plan fix estimate measurements jobs queue restore runs retry

function __oomfix_aitk_jobs
    set -l cmd (commandline -opc)
    set -l dir
    set -l i (contains -i -- --aitk $cmd)
    and set dir --aitk $cmd[(math $i + 1)]
    $cmd[1] jobs --names $dir </dev/null 2>/dev/null | string replace -r '^' 'aitk:'
end

# The fix ids, once `fix` has its JOB.
function __oomfix_fix_ids
    set -l cmd (commandline -opc)
    set -l args
    set -l skip 0
    for a in $cmd[3..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $a
            case --log -o --output
                set skip 1
            case '-*'
            case '*'
                set -a args $a
        end
    end
    test (count $args) -ge 1; or return
    $cmd[1] fix --list $args[1] </dev/null 2>/dev/null
end

function __oomfix_fix_has_job
    set -l cmd (commandline -opc)
    test (count $cmd) -ge 2; and test $cmd[2] = fix; or return 1
    set -l skip 0
    for a in $cmd[3..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $a
            case --log -o --output
                set skip 1
            case '-*'
            case '*'
                return 0
        end
    end
    return 1
end

complete -c oomfix -f
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -a "$__oomfix_subs"
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -F
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -a "(__oomfix_aitk_jobs)"
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -s h -l help -d 'show the usage'
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -s V -l version -d 'version and libraries'
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -l theme -x -a 'default-dark light high-contrast mono'
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -l no-color -d 'no colours'
complete -c oomfix -n "not __fish_seen_subcommand_from $__oomfix_subs" -l vram -x -a '8 12 16 24 32 40 48 80 96' -d 'the card, for the fit line'
complete -c oomfix -l aitk -x -a '(__fish_complete_directories)' -d 'AI Toolkit folder'

complete -c oomfix -n '__fish_seen_subcommand_from diagnose' -F
complete -c oomfix -n '__fish_seen_subcommand_from diagnose' -l job -r -F -d 'the job file'
complete -c oomfix -n '__fish_seen_subcommand_from diagnose' -l follow -d 'follow the log as the run writes it'
complete -c oomfix -n '__fish_seen_subcommand_from diagnose plan jobs runs estimate' -l json -d 'JSON output'
complete -c oomfix -n '__fish_seen_subcommand_from plan fix estimate' -l log -r -F -d 'the trainer log'
complete -c oomfix -n '__fish_seen_subcommand_from plan get set queue restore runs retry estimate' -F
complete -c oomfix -n '__fish_seen_subcommand_from plan get set queue restore runs retry estimate' -a '(__oomfix_aitk_jobs)'
complete -c oomfix -n '__fish_seen_subcommand_from fix; and not __oomfix_fix_has_job' -F
complete -c oomfix -n '__fish_seen_subcommand_from fix; and not __oomfix_fix_has_job' -a '(__oomfix_aitk_jobs)'
complete -c oomfix -n '__fish_seen_subcommand_from fix; and __oomfix_fix_has_job' -a '(__oomfix_fix_ids)'
complete -c oomfix -n '__fish_seen_subcommand_from fix' -l diff -d 'print the diff'
complete -c oomfix -n '__fish_seen_subcommand_from fix' -l keep-batch -d 'keep batch x accumulation'
complete -c oomfix -n '__fish_seen_subcommand_from fix' -l no-keep-batch -d 'only lower the batch size'
complete -c oomfix -n '__fish_seen_subcommand_from fix' -l force -d 'overwrite even if JOB changed'
complete -c oomfix -n '__fish_seen_subcommand_from restore' -l force -d 'overwrite even if JOB changed'
complete -c oomfix -n '__fish_seen_subcommand_from restore' -l first -d 'the job before oomfix retry first changed it'
complete -c oomfix -n '__fish_seen_subcommand_from fix' -l list -d 'print the fix ids'
complete -c oomfix -n '__fish_seen_subcommand_from fix get set estimate' -s o -l output -r -F -d 'write the result to OUT'
complete -c oomfix -n '__fish_seen_subcommand_from fix get set estimate' -s i -l in-place -d 'save JOB in place'
complete -c oomfix -n '__fish_seen_subcommand_from jobs' -l names -d 'names only'
complete -c oomfix -n '__fish_seen_subcommand_from estimate' -l vram -x -a '8 12 16 24 32 40 48 80 96' -d 'the card as sold, or a capacity'
complete -c oomfix -n '__fish_seen_subcommand_from estimate' -l gpu -x -d 'the card nvidia-smi lists as N'
complete -c oomfix -n '__fish_seen_subcommand_from estimate' -l steps -x -d 'at most N fixes of the path'
complete -c oomfix -n '__fish_seen_subcommand_from measurements' -l json -d 'JSON output'
complete -c oomfix -n '__fish_seen_subcommand_from measurements' -l export -d 'rows in the columns of the public data points'
complete -c oomfix -n '__fish_seen_subcommand_from estimate' -l apply -d 'write the path to a fitting job'
complete -c oomfix -n '__fish_seen_subcommand_from estimate' -l force -d 'overwrite even if JOB changed'
complete -c oomfix -n '__fish_seen_subcommand_from retry' -l max-tries -x -d 'tries before giving up'
complete -c oomfix -n '__fish_seen_subcommand_from retry' -l probe -x -d 'steps that count as fitting'
complete -c oomfix -n '__fish_seen_subcommand_from retry' -l grace -x -d 'seconds before SIGTERM, then SIGKILL'
complete -c oomfix -n '__fish_seen_subcommand_from retry' -l log -r -d 'a failed run whose fix comes first'
complete -c oomfix -n '__fish_seen_subcommand_from retry' -l events -x -d 'file descriptor for JSON events'
complete -c oomfix -n '__fish_seen_subcommand_from retry' -l vram -x -a '8 12 16 24 32 40 48 80 96' -d 'the card, for each try estimate'
complete -c oomfix -n "__fish_seen_subcommand_from $__oomfix_subs" -l help -d 'usage'
