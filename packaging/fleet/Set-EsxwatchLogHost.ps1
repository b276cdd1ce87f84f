#Requires -Version 5.1
#Requires -Modules VMware.VimAutomation.Core
<#
.SYNOPSIS
    Point the syslog of every host of a cluster (or a list of hosts) at esxwatch in collector mode (PowerCLI).

.DESCRIPTION
    For hosts that cannot run the esxwatch VIB (Secure Boot, execInstalledOnly, a STIG
    baseline): nothing is installed. For each host, in this order:
      1. Syslog.global.logHost set to -LogHost (Get-AdvancedSetting | Set-AdvancedSetting),
         then the host's syslog reloaded (esxcli system syslog reload, Get-EsxCli -V2)
         and the value read back: a host that does not keep it is a 'mismatch'.
      2. the host firewall's 'syslog' rule enabled (Set-VMHostFirewallException), so the
         host may open connections to the collector.
    One object per host goes down the pipeline (Host, LogHost, Firewall, Error); pipe it to
    Format-Table or Export-Csv. -WhatIf shows what would change.
    ESXi sends to every logHost it has: give two collectors (comma-separated) for
    redundancy. For ssl://, the collector's CA must be in the host's castore first
    (docs/collector.md).

.EXAMPLE
    Connect-VIServer vcenter.example.com
    .\Set-EsxwatchLogHost.ps1 -Cluster Prod01 -LogHost 'tcp://collector.example.com:514' |
        Format-Table -AutoSize

.EXAMPLE
    .\Set-EsxwatchLogHost.ps1 -VMHost esx01.example.com, esx02.example.com `
        -LogHost 'ssl://col1.example.com:1514,ssl://col2.example.com:1514'

.NOTES
    See docs/collector.md. ESXi 8.0 also takes RFC 5424 with octet counting:
    'tcp://collector:1514?formatter=RFC_5424&framing=octet_counting'.
#>
[CmdletBinding(SupportsShouldProcess = $true, DefaultParameterSetName = 'Cluster')]
param(
    [Parameter(Mandatory = $true, ParameterSetName = 'Cluster')]
    [string[]] $Cluster,

    [Parameter(Mandatory = $true, ParameterSetName = 'VMHost')]
    [string[]] $VMHost,

    # udp://, tcp:// or ssl://HOST[:PORT][?options], several comma-separated.
    [Parameter(Mandatory = $true)]
    [ValidatePattern('^(udp|tcp|ssl)://[^\s,]+(,(udp|tcp|ssl)://[^\s,]+)*$')]
    [string] $LogHost
)

Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'

function Get-EsxwatchHostList {
    if ($PSCmdlet.ParameterSetName -eq 'Cluster') {
        return Get-Cluster -Name $Cluster | Get-VMHost | Sort-Object -Property Name
    }
    return Get-VMHost -Name $VMHost | Sort-Object -Property Name
}

function Set-EsxwatchLogHostOnHost {
    param($VMHostObject)
    $row = [ordered]@{ Host = $VMHostObject.Name; LogHost = '-'; Firewall = '-'; Error = $null }
    try {
        $esxcli = Get-EsxCli -VMHost $VMHostObject -V2
        if ($PSCmdlet.ShouldProcess($VMHostObject.Name, "Send syslog to $LogHost")) {
            $row.LogHost = 'failed'
            $adv = Get-AdvancedSetting -Entity $VMHostObject -Name 'Syslog.global.logHost'
            $adv | Set-AdvancedSetting -Value $LogHost -Confirm:$false | Out-Null
            $esxcli.system.syslog.reload.Invoke() | Out-Null
            # the host's own word, not what was asked
            $got = (Get-AdvancedSetting -Entity $VMHostObject -Name 'Syslog.global.logHost').Value
            if ($got -eq $LogHost) { $row.LogHost = 'ok' } else { $row.LogHost = 'mismatch' }
        }
        if ($PSCmdlet.ShouldProcess($VMHostObject.Name, 'Enable the syslog firewall rule')) {
            $row.Firewall = 'failed'
            $rule = Get-VMHostFirewallException -VMHost $VMHostObject -Name 'syslog'
            $rule | Set-VMHostFirewallException -Enabled $true | Out-Null
            $row.Firewall = 'ok'
        }
    }
    catch {
        $row.Error = $_.Exception.Message
        Write-Warning "$($VMHostObject.Name): $($row.Error)"
    }
    return [pscustomobject]$row
}

foreach ($h in Get-EsxwatchHostList) {
    Set-EsxwatchLogHostOnHost -VMHostObject $h
}
