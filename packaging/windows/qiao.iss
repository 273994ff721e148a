; Inno Setup 6 script: a per-user installer for the frozen app in dist\qiao (packaging\build.ps1 -Installer).
;
;   iscc /DAppVersion=0.1.0 packaging\windows\qiao.iss     ->  dist\qiao-0.1.0-windows-x64-setup.exe
;
; - Per user, no administrator rights: installs to %LOCALAPPDATA%\Programs\Qiao (PrivilegesRequired=lowest). The
;   user may still choose "install for all users" in the dialog (PrivilegesRequiredOverridesAllowed).
; - Start-menu entry for the app (qiao.exe, windowed); optional desktop icon; "qiao-cli" on the user's PATH for
;   the command line (optional task).
; - Uninstaller registered under Settings > Apps; it removes the program folder and the PATH entry. User settings
;   (%LOCALAPPDATA%\Qiao) and downloaded models are left in place, like most apps do.
; - VC++ runtime: not needed as a system-wide install. The frozen app carries vcruntime140*.dll and msvcp140*.dll
;   app-locally (build.ps1 fails if they are missing), which works without admin rights; the redistributable
;   installer itself would need them.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#define AppName "Qiao"
#define SourceDir "..\..\dist\qiao"

[Setup]
; A fixed GUID: it identifies the app across upgrades. Never change it.
AppId={{4102D87A-E68E-4AEA-A848-A6ACCBD2230E}
AppName={#AppName}
AppVerName={#AppName} {#AppVersion}
AppVersion={#AppVersion}
AppPublisher=The Qiao developers
AppComments=Offline English to Chinese translator
VersionInfoVersion={#AppVersion}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir=..\..\dist
OutputBaseFilename=qiao-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\qiao.ico
UninstallDisplayIcon={app}\qiao.exe
UninstallDisplayName={#AppName} {#AppVersion}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=yes
CloseApplications=yes
ShowLanguageDialog=auto

[Languages]
Name: "en"; MessagesFile: "compiler:Default.isl"
; Simplified Chinese wizard text where this Inno Setup ships the translation (not every version does)
#if FileExists(AddBackslash(CompilerPath) + "Languages\ChineseSimplified.isl")
Name: "zh_CN"; MessagesFile: "compiler:Languages\ChineseSimplified.isl"
#endif

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add qiao-cli to PATH (command line)"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[InstallDelete]
; An upgrade replaces the program folder's contents (an older model or library must not linger).
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\qiao.exe"; Comment: "Offline English to Chinese translator"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\qiao.exe"; Tasks: desktopicon

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; \
  Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\qiao.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Paths: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Paths) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Paths) + ';') = 0;
end;

procedure RemovePath(Dir: string);
var
  Paths: string;
  P: Integer;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Paths) then
    exit;
  P := Pos(';' + Uppercase(Dir), Uppercase(Paths));
  if P > 0 then
  begin
    Delete(Paths, P, Length(Dir) + 1);
    RegWriteExpandStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Paths);
  end;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if CurUninstallStep = usPostUninstall then
    RemovePath(ExpandConstant('{app}'));
end;
