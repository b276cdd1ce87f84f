#Requires -Version 5.1
#Requires -Modules VMware.VimAutomation.Core
<#
.SYNOPSIS
    Install, configure and check esxwatch on every host of a cluster or a list of hosts (PowerCLI).

.DESCRIPTION
    For each host, in this order (each step only when asked for):
      1. the acceptance level (-AcceptanceLevel; never changed by default):
         esxcli software acceptance set --level=LEVEL
      2. the package (-Bundle): a VIB (.vib) or an offline bundle (.zip), either a
         path the host can read (/vmfs/volumes/...) or a local file, which is first
         uploaded to -Datastore (Copy-DatastoreItem). Installed through Get-EsxCli -V2:
         software.vib.install (viburl for a .vib, depot for a bundle), or
         software.component.apply with -Component.
      3. the /UserVars/Esxwatch* advanced settings (-Setting @{ EsxwatchServerHostname = ... }):
         Get-AdvancedSetting | Set-AdvancedSetting. The init script creates them on install.
      4. a restart of the esxwatch service (Restart-VMHostService), unless -NoRestart.
      5. a report: the installed VIB's version, whether the service runs, and the
         agent's own status: what it writes in its storage directory
         (/scratch/esxwatch), read through the datastore browser, so nothing needs
         SSH or esxcli system process. status.json (the --status --json form) is
         preferred when the agent writes it; else the status file ("key: value"
         lines, a "dest: NAME" block per destination with state
         delivering|failing|idle; agent/status.c).
    One object per host goes down the pipeline (Host, Install, Settings, Restart,
    Version, Running, State, Delivering, Backlog, StatusSource, Error); pipe it to
    Format-Table or Export-Csv. -WhatIf shows what would change.

.EXAMPLE
    Connect-VIServer vcenter.example.com
    .\Install-Esxwatch.ps1 -Cluster Prod01 -Bundle .\esxwatch-0.1.0-offline-bundle.zip `
        -Datastore shared-iso -AcceptanceLevel CommunitySupported `
        -Setting @{ EsxwatchServerHostname = 'li.example.com'; EsxwatchServerPort = 9543 } |
        Format-Table -AutoSize

.EXAMPLE
    .\Install-Esxwatch.ps1 -VMHost esx01.example.com, esx02.example.com `
        -Setting @{ EsxwatchServerHostname = 'li2.example.com' }

.NOTES
    See docs/fleet.md. The VIB is CommunitySupported (unsigned): a host at
    PartnerSupported refuses it unless -AcceptanceLevel CommunitySupported is given.
#>
[CmdletBinding(SupportsShouldProcess = $true, DefaultParameterSetName = 'Cluster')]
param(
    [Parameter(Mandatory = $true, ParameterSetName = 'Cluster')]
    [string[]] $Cluster,

    [Parameter(Mandatory = $true, ParameterSetName = 'VMHost')]
    [string[]] $VMHost,

    # A .vib or an offline bundle .zip: a local file or a /vmfs/volumes/... path.
    [string] $Bundle,

    # The datastore a local -Bundle is uploaded to (it must be mounted on every host).
    [string] $Datastore,

    # Install the offline bundle as a component (ESXi 7.0 and later).
    [switch] $Component,

    [ValidateSet('VMwareCertified', 'VMwareAccepted', 'PartnerSupported', 'CommunitySupported')]
    [string] $AcceptanceLevel,

    # /UserVars settings: @{ EsxwatchServerHostname = 'li.example.com'; EsxwatchServerSsl = 1 }
    [hashtable] $Setting = @{},

    [switch] $NoRestart,

    # How long to wait for the agent to report delivering after the restart.
    [ValidateRange(0, 600)]
    [int] $WaitSeconds = 30,

    # The agent's storage directory on the host (storage.directory).
    [string] $StorageDirectory = '/scratch/esxwatch'
)

Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'

foreach ($name in $Setting.Keys) {
    if ($name -notmatch '^Esxwatch[A-Za-z0-9_]+$') {
        throw "Setting '$name': only /UserVars/Esxwatch* settings"
    }
}
if ($Component -and $Bundle -and $Bundle -notlike '*.zip') {
    throw '-Component needs an offline bundle (.zip)'
}
if ($Bundle -and $Bundle -notlike '*.zip' -and $Bundle -notlike '*.vib') {
    throw "$Bundle is neither a .vib nor an offline bundle .zip"
}

function Get-EsxwatchHostList {
    if ($PSCmdlet.ParameterSetName -eq 'Cluster') {
        return Get-Cluster -Name $Cluster | Get-VMHost | Sort-Object -Property Name
    }
    return Get-VMHost -Name $VMHost | Sort-Object -Property Name
}

# A local -Bundle goes to -Datastore once; the hosts install it from there.
function Publish-EsxwatchBundle {
    param([string] $Path)
    if ($Path -like '/vmfs/volumes/*') {
        return $Path
    }
    if (-not (Test-Path -LiteralPath $Path)) {
        throw "$Path not found"
    }
    if (-not $Datastore) {
        throw "-Datastore is needed to upload $Path"
    }
    $ds = Get-Datastore -Name $Datastore | Select-Object -First 1
    $leaf = Split-Path -Path $Path -Leaf
    if ($PSCmdlet.ShouldProcess("[$Datastore] esxwatch/$leaf", 'Upload')) {
        $drive = New-PSDrive -Name EsxwatchDs -PSProvider VimDatastore -Root '\' -Location $ds
        try {
            if (-not (Test-Path -Path 'EsxwatchDs:\esxwatch')) {
                New-Item -Path 'EsxwatchDs:\esxwatch' -ItemType Directory | Out-Null
            }
            Copy-DatastoreItem -Item $Path -Destination 'EsxwatchDs:\esxwatch\' -Force
        }
        finally {
            Remove-PSDrive -Name $drive.Name
        }
    }
    return "/vmfs/volumes/$($ds.Name)/esxwatch/$leaf"
}

# The status text: status.json when the agent writes it, else the status file.
# Read through the datastore browser: /scratch is a directory on a datastore
# (ScratchConfig.CurrentScratchLocation).
function Get-EsxwatchStatusText {
    param($VMHostObject)
    $scratch = (Get-AdvancedSetting -Entity $VMHostObject -Name 'ScratchConfig.CurrentScratchLocation').Value
    $dir = $StorageDirectory -replace '^/scratch', $scratch
    if ($dir -notmatch '^/vmfs/volumes/([^/]+)/(.*)$') {
        return $null
    }
    $dsKey = $Matches[1]
    $rel = $Matches[2]
    $ds = Get-Datastore -VMHost $VMHostObject |
        Where-Object { $_.Name -eq $dsKey -or $_.ExtensionData.Info.Url -like "*/$dsKey/" } |
        Select-Object -First 1
    if ($null -eq $ds) {
        return $null
    }
    $tmp = Join-Path -Path ([System.IO.Path]::GetTempPath()) -ChildPath ("esxwatch-" + [guid]::NewGuid())
    New-Item -Path $tmp -ItemType Directory | Out-Null
    $drive = New-PSDrive -Name EsxwatchSt -PSProvider VimDatastore -Root '\' -Location $ds
    try {
        foreach ($file in @('status.json', 'status')) {
            $src = 'EsxwatchSt:\' + ($rel -replace '/', '\') + '\' + $file
            if (Test-Path -Path $src) {
                Copy-DatastoreItem -Item $src -Destination $tmp -Force
                $text = Get-Content -LiteralPath (Join-Path -Path $tmp -ChildPath $file) -Raw
                $source = if ($file -eq 'status.json') { 'json' } else { 'file' }
                return [pscustomobject]@{ Source = $source; Text = $text }
            }
        }
        return $null
    }
    finally {
        Remove-PSDrive -Name $drive.Name
        Remove-Item -LiteralPath $tmp -Recurse -Force
    }
}

# Status text -> version, state (delivering when every destination delivers,
# failing when one fails, idle otherwise), backlog, updated (ms).
function ConvertFrom-EsxwatchStatus {
    param($Status)
    $r = [ordered]@{ Version = $null; State = $null; Backlog = $null; UpdatedMs = $null }
    if ($null -eq $Status) {
        return [pscustomobject]$r
    }
    $states = @()
    $backlog = 0
    if ($Status.Source -eq 'json') {
        $j = $Status.Text | ConvertFrom-Json
        $r.Version = $j.version
        $r.UpdatedMs = $j.updated_ms
        $dests = @()
        foreach ($key in @('destinations', 'dests')) {
            if ($j.PSObject.Properties.Name -contains $key) {
                $dests = @($j.$key)
            }
        }
        foreach ($d in $dests) {
            $states += [string]$d.state
            $backlog += [long]$d.backlog_events
        }
    }
    else {
        foreach ($line in ($Status.Text -split "`n")) {
            if ($line -match '^version: *(.*)$') { $r.Version = $Matches[1].Trim() }
            elseif ($line -match '^updated_ms: *([0-9]+)') { $r.UpdatedMs = [long]$Matches[1] }
            elseif ($line -match '^ state: *([a-z]+)') { $states += $Matches[1] }
            elseif ($line -match '^ backlog_events: *([0-9]+)') { $backlog += [long]$Matches[1] }
        }
    }
    if ($states.Count -gt 0) {
        $r.Backlog = $backlog
        if ($states -contains 'failing') { $r.State = 'failing' }
        elseif (@($states | Where-Object { $_ -ne 'delivering' }).Count -eq 0) { $r.State = 'delivering' }
        else { $r.State = 'idle' }
    }
    return [pscustomobject]$r
}

function Install-EsxwatchOnHost {
    param($VMHostObject, [string] $HostPath)
    $row = [ordered]@{
        Host = $VMHostObject.Name; Install = '-'; Settings = '-'; Restart = '-'; Version = $null
        Running = $false; State = $null; Delivering = $false; Backlog = $null
        StatusSource = 'none'; Error = $null
    }
    try {
        $esxcli = Get-EsxCli -VMHost $VMHostObject -V2
        if ($AcceptanceLevel -and $PSCmdlet.ShouldProcess($VMHostObject.Name, "Set acceptance level $AcceptanceLevel")) {
            $esxcli.software.acceptance.set.Invoke(@{ level = $AcceptanceLevel }) | Out-Null
        }
        if ($HostPath -and $PSCmdlet.ShouldProcess($VMHostObject.Name, "Install $HostPath")) {
            $row.Install = 'failed'
            if ($Component) {
                $res = $esxcli.software.component.apply.Invoke(@{ depot = @($HostPath) })
            }
            elseif ($HostPath -like '*.vib') {
                $res = $esxcli.software.vib.install.Invoke(@{ viburl = @($HostPath) })
            }
            else {
                $res = $esxcli.software.vib.install.Invoke(@{ depot = @($HostPath) })
            }
            Write-Verbose "$($VMHostObject.Name): $($res.Message)"
            $row.Install = 'ok'
            if ($res.RebootRequired -eq $true) { $row.Install = 'ok-reboot' }
        }
        if ($Setting.Count -gt 0) {
            $row.Settings = 'failed'
            foreach ($name in $Setting.Keys) {
                $adv = Get-AdvancedSetting -Entity $VMHostObject -Name "UserVars.$name"
                if ($null -eq $adv) {
                    throw "UserVars.$name does not exist (is esxwatch installed?)"
                }
                if ($PSCmdlet.ShouldProcess("$($VMHostObject.Name) UserVars.$name", "Set to '$($Setting[$name])'")) {
                    $adv | Set-AdvancedSetting -Value $Setting[$name] -Confirm:$false | Out-Null
                }
            }
            $row.Settings = 'ok'
        }
        $since = [DateTimeOffset]::UtcNow.ToUnixTimeMilliseconds()
        $svc = Get-VMHostService -VMHost $VMHostObject | Where-Object { $_.Key -eq 'esxwatch' }
        if (-not $NoRestart) {
            $row.Restart = 'failed'
            if ($null -eq $svc) {
                throw 'the esxwatch service is not listed by hostd (is esxwatch installed?)'
            }
            if ($PSCmdlet.ShouldProcess($VMHostObject.Name, 'Restart the esxwatch service')) {
                $svc = $svc | Restart-VMHostService -Confirm:$false
                $row.Restart = 'ok'
            }
            else {
                $row.Restart = 'whatif'
            }
        }
        $vib = $esxcli.software.vib.get.Invoke(@{ vibname = 'esxwatch' }) | Select-Object -First 1
        if ($null -ne $vib) { $row.Version = $vib.Version }
        $svc = Get-VMHostService -VMHost $VMHostObject | Where-Object { $_.Key -eq 'esxwatch' }
        $row.Running = ($null -ne $svc -and $svc.Running)
        # The status the agent writes: wait for one newer than the restart
        # that says delivering, up to WaitSeconds.
        $deadline = (Get-Date).AddSeconds($WaitSeconds)
        do {
            $status = Get-EsxwatchStatusText -VMHostObject $VMHostObject
            $st = ConvertFrom-EsxwatchStatus -Status $status
            $fresh = $NoRestart -or $null -eq $st.UpdatedMs -or $st.UpdatedMs -ge $since
            if ($fresh -and $st.State -eq 'delivering') { break }
            Start-Sleep -Seconds 2
        } while ((Get-Date) -lt $deadline)
        if ($null -ne $status) { $row.StatusSource = $status.Source }
        if ($null -ne $status -and -not $fresh) { $row.StatusSource += '-stale' }
        if ($st.Version) { $row.Version = $st.Version }
        $row.State = $st.State
        $row.Backlog = $st.Backlog
        $row.Delivering = ($fresh -and $st.State -eq 'delivering')
    }
    catch {
        $row.Error = $_.Exception.Message
        Write-Warning "$($VMHostObject.Name): $($row.Error)"
    }
    return [pscustomobject]$row
}

$hostPath = $null
if ($Bundle) {
    $hostPath = Publish-EsxwatchBundle -Path $Bundle
}
foreach ($h in Get-EsxwatchHostList) {
    Install-EsxwatchOnHost -VMHostObject $h -HostPath $hostPath
}
