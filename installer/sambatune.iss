; Inno Setup 6 script for SambaTune on Windows: installs the PyInstaller bundle for
; the current user by default (no administrator rights needed), with a Start menu
; entry and an uninstaller. The setup offers "install for all users", which asks
; for administrator rights. Tuning this computer's TCP registry values asks for
; them on its own, each time it is applied.
;
; build-windows.ps1 runs it as:
;   iscc /DAppVersion=X.Y.Z /DBundleDir=DIST\SambaTune /DOutputDir=DIST sambatune.iss

#ifndef AppVersion
  #error Pass the version from pyproject.toml: iscc /DAppVersion=X.Y.Z (build-windows.ps1 does)
#endif
#ifndef BundleDir
  #define BundleDir "..\dist\SambaTune"
#endif
#ifndef OutputDir
  #define OutputDir "..\dist"
#endif
#define AppName "SambaTune"
; bundle_layout.GUI_NAME and WINDOWS_CLI_NAME: the windowed and the console program.
#define AppExe "SambaTune.exe"
#define CliExe "sambatune-cli.exe"

[Setup]
; Never change AppId: Windows finds an earlier install (to upgrade it, and its
; uninstaller) by it.
AppId={{056C8980-F897-4BF3-BAE0-506B16EDFF8B}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=The SambaTune developers
AppComments=Measure and tune Samba file servers and the computers that use them
; %LOCALAPPDATA%\Programs for a per-user install, Program Files otherwise (ProgramsFolder).
DefaultDirName={code:ProgramsFolder}\{#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog commandline
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
; Qt 6 runs on Windows 10 and later.
MinVersion=10.0
OutputDir={#OutputDir}
OutputBaseFilename={#AppName}-{#AppVersion}-windows-x64-setup
SetupIconFile=..\resources\icons\sambatune.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName} {#AppVersion}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An upgrade replaces the bundle whole: no file of an older version may linger.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Comment: "Measure and tune Samba file servers"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
// What {autopf} means, spelled out: Wine 8's shell32 refuses FOLDERID_UserProgramFiles,
// so {autopf} stops a per-user setup there, and Windows defines that folder as
// %LOCALAPPDATA%\Programs (tests/test_windows_build.py installs under Wine).
function ProgramsFolder(Param: String): String;
begin
  if IsAdminInstallMode then
    Result := ExpandConstant('{commonpf}')
  else
    Result := ExpandConstant('{localappdata}\Programs');
end;
