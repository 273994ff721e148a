# Freeze Qiao into dist\qiao\ on Windows (Linux and macOS: packaging/build.sh).
#
#   powershell -ExecutionPolicy Bypass -File packaging\build.ps1 [-Model DIR[,DIR...]|fixture|none] [-Int8Only] [-Installer]
#   powershell -ExecutionPolicy Bypass -File packaging\build.ps1 -Catalogue DIR\catalogue.json [-Int8Only] [-Installer]
#
#   -Model DIR,DIR  the model bundles to embed, one per pair (default: resources\models\opus-mt-en-zh, and
#                   resources\models\opus-mt-zh-en when it has been built)
#   -Model fixture  the committed tiny en->zh test model (what CI's smoke test uses); fixture-zh-en is its twin
#   -Model none     no model inside; the app opens and explains where to put one
#   -Catalogue F    a release's catalogue.json (its zips beside it): embed the best-quality bundle of each
#                   direction, as a new install would choose (the Firefox models where the release has them)
#   -Int8Only       embed the INT8 models only (drops fp32\ and rewrites each manifest to match)
#   -Installer      also build dist\qiao-<version>-windows-x64-setup.exe with Inno Setup (iscc on PATH or in the
#                   default install folder)
#
# Output: dist\qiao\qiao.exe (windowed: the app, Start menu) and dist\qiao\qiao-cli.exe (console twin for the
# command line: `qiao-cli --self-test`, `qiao-cli translate ...`), sharing dist\qiao\_internal.
# Uses $env:PYTHON, else .venv\Scripts\python.exe, else python; it needs: pip install -e .[package]
[CmdletBinding()]
param(
    [string[]]$Model = @(),
    [string]$Catalogue = "",
    [switch]$Int8Only,
    [switch]$Installer
)
$ErrorActionPreference = "Stop"
Set-Location (Split-Path -Parent $PSScriptRoot)

function Invoke-Checked {
    param([string]$Exe, [string[]]$Arguments)
    & $Exe @Arguments
    if ($LASTEXITCODE -ne 0) { throw "$Exe $($Arguments -join ' ') failed with exit code $LASTEXITCODE" }
}

$python = $env:PYTHON
if (-not $python) {
    $python = if (Test-Path .venv\Scripts\python.exe) { ".venv\Scripts\python.exe" } else { "python" }
}
& $python -c "import PyInstaller" 2>$null
if ($LASTEXITCODE -ne 0) { throw "PyInstaller is missing: $python -m pip install -e .[package]" }

$stage = "build\stage"
if (Test-Path $stage) { Remove-Item -Recurse -Force $stage }
New-Item -ItemType Directory -Force $stage | Out-Null
$specArgs = @()
if ($Model -contains "none" -and $Model.Count -gt 1) { throw "-Model none cannot be combined with other models" }
if ($Catalogue -and $Model.Count -gt 0) { throw "-Catalogue chooses the models itself: not with -Model" }
if ($Model -notcontains "none") {
    $stageArgs = @("packaging\stage_model.py", $stage)
    foreach ($m in $Model) { if ($m) { $stageArgs += @("--model", $m) } }
    if ($Catalogue) { $stageArgs += @("--catalogue", $Catalogue) }
    if ($Int8Only) { $stageArgs += "--int8-only" }
    Invoke-Checked $python $stageArgs
    $specArgs = @("--", "--model-stage", $stage)
}

foreach ($old in @("dist\qiao")) { if (Test-Path $old) { Remove-Item -Recurse -Force $old } }
Invoke-Checked $python (@("-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
    "--distpath", "dist", "--workpath", "build\pyinstaller", "packaging\qiao.spec") + $specArgs)

# Fail if a build-only package (torch, transformers, ...) got in; write the size report.
Invoke-Checked $python @("packaging\finish_dist.py", "dist\qiao", "--json", "build\check_dist.json")

# The VC++ runtime: PyInstaller copies vcruntime140.dll, vcruntime140_1.dll and msvcp140*.dll next to the Python,
# Qt and onnxruntime DLLs that need them (app-local deployment, which Microsoft supports), so a per-user install
# without administrator rights never needs the system-wide redistributable. Make sure they really are there.
foreach ($dll in @("vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll")) {
    if (-not (Get-ChildItem -Recurse -File dist\qiao\_internal -Filter $dll | Select-Object -First 1)) {
        throw "build.ps1: $dll is not in dist\qiao\_internal; the app would need the VC++ redistributable"
    }
}
Write-Host "build.ps1: dist\qiao\qiao.exe and dist\qiao\qiao-cli.exe are ready"

if ($Installer) {
    $iscc = (Get-Command iscc -ErrorAction SilentlyContinue).Source
    if (-not $iscc) { $iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
    if (-not (Test-Path $iscc)) { throw "Inno Setup 6 (ISCC.exe) not found: choco install innosetup" }
    $version = (& $python -c "import engine; print(engine.__version__)").Trim()
    Invoke-Checked $iscc @("/Qp", "/DAppVersion=$version", "packaging\windows\qiao.iss")
    Write-Host "build.ps1: dist\qiao-$version-windows-x64-setup.exe"
}
