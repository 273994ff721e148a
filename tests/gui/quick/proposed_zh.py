"""The Chinese proposed for gui/quick's strings, (context, source) → translation, for the integrator's
qiao_zh_CN.ts; shots.py installs it so the 简体中文 screenshots show it, and a test keeps it complete."""

PROPOSED_ZH = {
    ("QuickPopup", "Quick translate"): "快速翻译",
    ("QuickPopup", "&Copy"): "复制(&C)",
    ("QuickPopup", "Open in &window"): "在窗口中打开(&W)",
    ("QuickPopup", "Pin"): "固定",
    ("QuickPopup", "Pinned: stays open until you close it"): "已固定：保持打开，直到你关闭它",
    ("QuickPopup", "Pin: keep the popup open"): "固定：让弹窗保持打开",
    ("QuickPopup", "Close (Esc)"): "关闭 (Esc)",
    ("QuickPopup", "Close"): "关闭",
    ("QuickPopup", "Translating…"): "正在翻译…",
    ("QuickPopup", "Translation failed"): "翻译失败",
    ("QuickPopup", "Copied"): "已复制",
    ("QuickPopup", "The clipboard holds no text (an image or files?)."): "剪贴板里没有文字（是图片或文件？）。",
    (
        "QuickPopup",
        "Nothing selected or copied: select some text, then try again.",
    ): "没有选中或复制的内容：请先选中一些文字，再试一次。",
    (
        "QuickPopup",
        "The text is too long for the popup ({count:,} characters; at most {limit:,}).",
    ): "文字太长，弹窗放不下（{count:,} 个字符；最多 {limit:,} 个）。",
    ("QuickPopup", "The clipboard holds a password; not translated."): "剪贴板里是密码，不翻译。",
    (
        "QuickShortcut",
        "“{sequence}” is not a single shortcut such as Ctrl+Alt+T.",
    ): "“{sequence}”不是单个快捷键（例如 Ctrl+Alt+T）。",
    (
        "QuickShortcut",
        "“{sequence}” uses a key a global shortcut cannot use.",
    ): "“{sequence}”用了全局快捷键不能用的键。",
    (
        "QuickShortcut",
        "“{sequence}” needs Ctrl, Alt or Meta, or it would take a key used for typing.",
    ): "“{sequence}”需要 Ctrl、Alt 或 Meta，否则会占用打字用的键。",
    (
        "QuickShortcut",
        "This desktop does not let applications grab keys: bind `qiao popup` as a custom shortcut in GNOME/KDE "
        "settings.",
    ): "此桌面不允许应用程序占用按键：请在 GNOME/KDE 设置中把 `qiao popup` 设为自定义快捷键。",
    ("QuickShortcut", "This keyboard has no key for “{sequence}”."): "此键盘上没有“{sequence}”对应的键。",
    ("QuickShortcut", "{sequence} is already taken by another application."): "{sequence} 已被其他应用程序占用。",
    ("QuickShortcut", "macOS refused {sequence} (error {code})."): "macOS 拒绝了 {sequence}（错误 {code}）。",
    ("QuickShortcut", "Asking the desktop to bind {sequence}…"): "正在请求桌面绑定 {sequence}…",
    ("QuickShortcut", "The desktop bound the shortcut to {sequence}."): "桌面已将快捷键绑定为 {sequence}。",
    (
        "QuickShortcut",
        "The desktop did not bind {sequence} (is it taken by another shortcut?).",
    ): "桌面没有绑定 {sequence}（是否已被其他快捷键占用？）。",
    (
        "QuickShortcut",
        "The desktop's shortcut dialog was cancelled, so {sequence} is not bound.",
    ): "桌面的快捷键对话框已被取消，{sequence} 未绑定。",
    (
        "QuickShortcut",
        "The desktop refused {sequence} (error {code}); bind `qiao popup` as a custom shortcut in GNOME/KDE "
        "settings instead.",
    ): "桌面拒绝了 {sequence}（错误 {code}）；请改在 GNOME/KDE 设置中把 `qiao popup` 设为自定义快捷键。",
    (
        "QuickShortcut",
        "The desktop portal failed ({name}); bind `qiao popup` as a custom shortcut in GNOME/KDE settings instead.",
    ): "桌面门户出错（{name}）；请改在 GNOME/KDE 设置中把 `qiao popup` 设为自定义快捷键。",
    (
        "QuickShortcut",
        "Quick translate: the selection or the clipboard in Qiao's popup",
    ): "快速翻译：在 Qiao 的弹窗中翻译选中的文字或剪贴板",
    ("QuickShortcut", "Windows refused {sequence} (error {code})."): "Windows 拒绝了 {sequence}（错误 {code}）。",
    (
        "QuickShortcut",
        "libX11 is not installed, so no X11 shortcut can be registered.",
    ): "未安装 libX11，无法注册 X11 快捷键。",
    ("QuickShortcut", "Cannot reach the X display “{name}”."): "无法连接 X 显示“{name}”。",
    ("QuickShortcut", "The X server refused {sequence} (error {code})."): "X 服务器拒绝了 {sequence}（错误 {code}）。",
}
