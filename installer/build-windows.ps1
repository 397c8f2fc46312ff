# Build SambaTune for Windows: the PyInstaller bundle, then the Inno Setup installer.
#
#   powershell -ExecutionPolicy Bypass -File installer\build-windows.ps1 [-Out DIR]
#
# -Python names the Python that has SambaTune and PyInstaller installed (default:
# .venv\Scripts\python.exe, else python); -BuildDir is PyInstaller's work folder
# (default: build\pyinstaller). Needs Inno Setup 6 (choco install innosetup).
# Writes DIR\SambaTune\ (the bundle) and DIR\SambaTune-VERSION-windows-x64-setup.exe,
# and prints the installer's path last.
param(
    [string]$Out = "",
    [string]$Python = "",
    [string]$BuildDir = ""
)
$ErrorActionPreference = "Stop"

$Repo = Split-Path -Parent $PSScriptRoot
if (-not $Out) { $Out = Join-Path $Repo "dist" }
New-Item -ItemType Directory -Force -Path $Out | Out-Null
$Out = (Resolve-Path $Out).Path
if (-not $Python) {
    $Venv = Join-Path $Repo ".venv\Scripts\python.exe"
    $Python = if (Test-Path $Venv) { $Venv } else { "python" }
}
if (-not $BuildDir) { $BuildDir = Join-Path $Repo "build\pyinstaller" }

function Invoke-Checked {
    param([string]$What, [scriptblock]$Command)
    & $Command
    if ($LASTEXITCODE -ne 0) { throw "$What failed (exit code $LASTEXITCODE)" }
}

$Version = & $Python -c "from importlib.metadata import version; print(version('sambatune'))"
if ($LASTEXITCODE -ne 0) { throw "SambaTune is not installed in $Python" }
$Version = "$Version".Trim()

$Bundle = Join-Path $Out "SambaTune"
if (Test-Path $Bundle) { Remove-Item -Recurse -Force $Bundle }
Invoke-Checked "PyInstaller" {
    & $Python -m PyInstaller --noconfirm --clean --log-level WARN `
        --distpath $Out --workpath $BuildDir (Join-Path $PSScriptRoot "sambatune.spec")
}

# The bundle checks itself (agents, resources, Qt) before it is packed.
$env:QT_QPA_PLATFORM = "offscreen"
Invoke-Checked "The bundle's self-check" { & (Join-Path $Bundle "sambatune-cli.exe") --self-check --gui }
Remove-Item Env:QT_QPA_PLATFORM

$Iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
if (-not $Iscc) { $Iscc = Join-Path ${env:ProgramFiles(x86)} "Inno Setup 6\ISCC.exe" }
if (-not (Test-Path $Iscc)) { throw "Inno Setup 6 is not installed (choco install innosetup)" }
Invoke-Checked "Inno Setup" {
    & $Iscc /Q "/DAppVersion=$Version" "/DBundleDir=$Bundle" "/DOutputDir=$Out" `
        (Join-Path $PSScriptRoot "sambatune.iss")
}
Join-Path $Out "SambaTune-$Version-windows-x64-setup.exe"
