<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>AboutDialog</name>
    <message>
        <source>About Qiao</source>
        <translation>关于桥</translation>
    </message>
    <message>
        <source>Offline English ⇄ Chinese translator. Nothing you type leaves this computer.</source>
        <translation>离线英汉互译工具。您输入的任何内容都不会离开这台电脑。</translation>
    </message>
    <message>
        <source>{p}, loaded</source>
        <translation>{p}，已加载</translation>
    </message>
    <message>
        <source>not loaded</source>
        <translation>未加载</translation>
    </message>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Licence:</source>
        <translation>许可证：</translation>
    </message>
    <message>
        <source>Attribution:</source>
        <translation>署名：</translation>
    </message>
    <message>
        <source>Languages:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <source>Model folder:</source>
        <translation>模型文件夹：</translation>
    </message>
</context>
<context>
    <name>AlternativesController</name>
    <message>
        <source>Other translations</source>
        <translation>其他译法</translation>
    </message>
    <message>
        <source>More translations…</source>
        <translation>更多译法…</translation>
    </message>
    <message>
        <source>Translate this sentence again and list other ways to say it</source>
        <translation>重新翻译这句话，并列出其他译法</translation>
    </message>
    <message>
        <source>The alternative could not be applied.</source>
        <translation>无法采用这个替换译法。</translation>
    </message>
    <message>
        <source>No alternatives: no translation model is loaded.</source>
        <translation>没有替换译法：尚未加载翻译模型。</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>No alternatives: an unexpected error in the engine.</source>
        <translation>没有替换译法：引擎出现意外错误。</translation>
    </message>
    <message>
        <source>No alternatives: {reason}</source>
        <translation>没有替换译法：{reason}</translation>
    </message>
</context>
<context>
    <name>AlternativesPopup</name>
    <message>
        <source>Alternatives</source>
        <translation>替换译法</translation>
    </message>
    <message>
        <source>Instead of “{word}”:</source>
        <translation>替换“{word}”：</translation>
    </message>
    <message>
        <source>Alternatives for “{word}”</source>
        <translation>“{word}”的替换译法</translation>
    </message>
    <message>
        <source>Other translations of this sentence:</source>
        <translation>这句话的其他译法：</translation>
    </message>
    <message>
        <source>Other translations of this sentence</source>
        <translation>这句话的其他译法</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message>
        <source>No alternatives found</source>
        <translation>没有找到替换译法</translation>
    </message>
    <message>
        <source>“{word}”</source>
        <translation>“{word}”</translation>
    </message>
</context>
<context>
    <name>Desktop</name>
    <message>
        <source>Qiao is still running</source>
        <translation>桥仍在运行</translation>
    </message>
    <message>
        <source>Qiao keeps running in the tray. Click its icon to open the window; Quit in its menu ends it.</source>
        <translation>桥会在托盘中继续运行。点击托盘图标可打开窗口；在其菜单中选择“退出”即可结束。</translation>
    </message>
    <message>
        <source>Qiao could not change its start-with-the-system entry: {error}</source>
        <translation>桥无法更改开机启动项：{error}</translation>
    </message>
    <message>
        <source>The local translation API is not part of this build of Qiao.</source>
        <translation>此版本的桥不含本地翻译 API。</translation>
    </message>
    <message>
        <source>The local translation API did not start: {error}</source>
        <translation>本地翻译 API 未能启动：{error}</translation>
    </message>
    <message>
        <source>The local translation API&apos;s key file is not private: {warning}</source>
        <translation>本地翻译 API 的密钥文件不是私有的：{warning}</translation>
    </message>
</context>
<context>
    <name>DesktopPage</name>
    <message>
        <source>This desktop shows no tray icons.</source>
        <translation>此桌面不显示托盘图标。</translation>
    </message>
    <message>
        <source>&amp;Start Qiao when I log in</source>
        <translation>登录时启动桥(&amp;S)</translation>
    </message>
    <message>
        <source>Qiao starts in the background, in the tray where there is one.</source>
        <translation>桥在后台启动；有托盘时显示在托盘中。</translation>
    </message>
    <message>
        <source>Quick translate shortcut</source>
        <translation>快速翻译快捷键</translation>
    </message>
    <message>
        <source>Copy the same text &amp;twice quickly to translate it</source>
        <translation>快速复制同一段文字两次即可翻译(&amp;T)</translation>
    </message>
    <message>
        <source>Keep running in the t&amp;ray when the window is closed</source>
        <translation>关闭窗口后在托盘中继续运行(&amp;R)</translation>
    </message>
    <message>
        <source>Translate English copied to the clip&amp;board</source>
        <translation>翻译复制到剪贴板的英文(&amp;B)</translation>
    </message>
    <message>
        <source>Never for text copied from Qiao itself, from password managers, or very long text.</source>
        <translation>不会翻译从桥本身或密码管理器复制的文字，也不会翻译很长的文字。</translation>
    </message>
    <message>
        <source>&amp;Let other apps on this computer translate through Qiao</source>
        <translation>允许本机的其他应用通过桥翻译(&amp;L)</translation>
    </message>
    <message>
        <source>A LibreTranslate-compatible API on 127.0.0.1 only: nothing outside this computer can reach it.</source>
        <translation>兼容 LibreTranslate 的 API，仅监听 127.0.0.1：本机以外无法访问。</translation>
    </message>
    <message>
        <source>API port</source>
        <translation>API 端口</translation>
    </message>
    <message>
        <source>None: any app on this computer may call</source>
        <translation>无：本机任何应用都可调用</translation>
    </message>
    <message>
        <source>API key file</source>
        <translation>API 密钥文件</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>Quick translate</source>
        <translation>快速翻译</translation>
    </message>
    <message>
        <source>Short&amp;cut:</source>
        <translation>快捷键(&amp;C)：</translation>
    </message>
    <message>
        <source>Local translation API</source>
        <translation>本地翻译 API</translation>
    </message>
    <message>
        <source>&amp;Port:</source>
        <translation>端口(&amp;P)：</translation>
    </message>
    <message>
        <source>API key &amp;file:</source>
        <translation>API 密钥文件(&amp;F)：</translation>
    </message>
    <message>
        <source>Press the keys, e.g. Ctrl+Alt+T.</source>
        <translation>请按下按键，例如 Ctrl+Alt+T。</translation>
    </message>
    <message>
        <source>Opens the popup from any app while Qiao runs.</source>
        <translation>桥运行时可在任何应用中打开弹窗。</translation>
    </message>
    <message>
        <source>A global shortcut needs Ctrl, Alt, Shift or Meta and one key; this one is not kept.</source>
        <translation>全局快捷键需要 Ctrl、Alt、Shift 或 Meta 加一个键；此快捷键不会保存。</translation>
    </message>
    <message>
        <source>Address: {url}</source>
        <translation>地址：{url}</translation>
    </message>
</context>
<context>
    <name>DocumentsPanel</name>
    <message>
        <source>Plain text</source>
        <translation>纯文本</translation>
    </message>
    <message>
        <source>Markdown</source>
        <translation>Markdown</translation>
    </message>
    <message>
        <source>Web page (HTML)</source>
        <translation>网页（HTML）</translation>
    </message>
    <message>
        <source>Subtitles (SRT)</source>
        <translation>字幕（SRT）</translation>
    </message>
    <message>
        <source>Subtitles (WebVTT)</source>
        <translation>字幕（WebVTT）</translation>
    </message>
    <message>
        <source>Word document</source>
        <translation>Word 文档</translation>
    </message>
    <message>
        <source>OpenDocument text</source>
        <translation>OpenDocument 文本</translation>
    </message>
    <message>
        <source>PowerPoint presentation</source>
        <translation>PowerPoint 演示文稿</translation>
    </message>
    <message>
        <source>EPUB e-book</source>
        <translation>EPUB 电子书</translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>Translating</source>
        <translation>正在翻译</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Estimating the time left…</source>
        <translation>正在估算剩余时间…</translation>
    </message>
    <message>
        <source>Less than a minute left</source>
        <translation>还剩不到 1 分钟</translation>
    </message>
    <message>
        <source>About {n} min left</source>
        <translation>还剩约 {n} 分钟</translation>
    </message>
    <message>
        <source>About {h} h {m} min left</source>
        <translation>还剩约 {h} 小时 {m} 分钟</translation>
    </message>
    <message>
        <source>Took {n} s</source>
        <translation>用时 {n} 秒</translation>
    </message>
    <message>
        <source>Took {n} min</source>
        <translation>用时 {n} 分钟</translation>
    </message>
    <message>
        <source>The file is no longer there.</source>
        <translation>该文件已不存在。</translation>
    </message>
    <message>
        <source>This is a folder: add the documents in it instead.</source>
        <translation>这是一个文件夹：请添加其中的文档。</translation>
    </message>
    <message>
        <source>PDF is not supported: its layout cannot be rebuilt in another language. Save or export it as a Word document (.docx) or as text first, then translate that.</source>
        <translation>不支持 PDF：其版式无法用另一种语言重建。请先将其另存为或导出为 Word 文档（.docx）或文本，再翻译该文件。</translation>
    </message>
    <message>
        <source>Qiao does not translate this kind of file.</source>
        <translation>桥无法翻译这类文件。</translation>
    </message>
    <message>
        <source>No translation model is loaded.</source>
        <translation>未加载翻译模型。</translation>
    </message>
    <message>
        <source>Stopped because the translation direction changed. Switch back to {pair} and press Try again to go on from where it stopped.</source>
        <translation>翻译方向已更改，因此已停止。请切换回{pair}，然后点击“重试”，即可从中断处继续。</translation>
    </message>
    <message>
        <source>An unexpected error stopped it. Try again; if it keeps failing, the file may be damaged.</source>
        <translation>发生意外错误，翻译已停止。请重试；如果一直失败，该文件可能已损坏。</translation>
    </message>
    <message>
        <source>%v / %m parts</source>
        <translation>%v / %m 段</translation>
    </message>
    <message>
        <source>Progress of {name}</source>
        <translation>{name} 的进度</translation>
    </message>
    <message>
        <source>Reading the file…</source>
        <translation>正在读取文件…</translation>
    </message>
    <message>
        <source>Saved as {name}</source>
        <translation>已保存为 {name}</translation>
    </message>
    <message>
        <source>A translation of this file is already there ({name}). Replace it, or choose another name or folder below and press Try again.</source>
        <translation>此文件的译文已经存在（{name}）。请替换它，或在下方选择其他名称或文件夹，然后点击“重试”。</translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation>日语</translation>
    </message>
    <message>
        <source>Korean</source>
        <translation>韩语</translation>
    </message>
    <message>
        <source>This document is in {language}, and no {pair} model is installed to translate it. Get opus-mt-{key} in File → Models…, then press Try again.</source>
        <translation>这份文档是{language}的，但没有安装可翻译它的{pair}模型。请在“文件 → 模型…”中获取 opus-mt-{key}，然后点击“重试”。</translation>
    </message>
    <message>
        <source>This document looks {language}; Qiao translates only English and Chinese.</source>
        <translation>这份文档看起来是{language}的；Qiao 只翻译英文和中文。</translation>
    </message>
    <message>
        <source>{n} parts could not be translated and were left as they were</source>
        <translation>有 {n} 段无法翻译，已保留原文</translation>
    </message>
    <message>
        <source>went on from where it stopped ({n} parts done before)</source>
        <translation>已从中断处继续（之前已完成 {n} 段）</translation>
    </message>
    <message>
        <source>Nothing was written. Try again goes on from where it stopped.</source>
        <translation>未写入任何文件。点击“重试”可从中断处继续。</translation>
    </message>
    <message>
        <source>Will be saved as {name}</source>
        <translation>将保存为 {name}</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Cancel translating {name}</source>
        <translation>取消翻译 {name}</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Open the translation of {name}</source>
        <translation>打开 {name} 的译文</translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation>在文件夹中显示</translation>
    </message>
    <message>
        <source>Show the translation in its folder</source>
        <translation>在所在文件夹中显示译文</translation>
    </message>
    <message>
        <source>Replace the earlier result</source>
        <translation>替换之前的译文</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Translate it again and replace {name}</source>
        <translation>重新翻译并替换 {name}</translation>
    </message>
    <message>
        <source>Documents ({n} to go)</source>
        <translation>文档（还有 {n} 个）</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <source>&amp;Documents</source>
        <translation>文档(&amp;D)</translation>
    </message>
    <message>
        <source>No application could open {name}. Open it yourself: {path}</source>
        <translation>没有应用程序能打开 {name}。请自行打开：{path}</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <source>No file manager could open the folder. Open it yourself: {path}</source>
        <translation>没有文件管理器能打开该文件夹。请自行打开：{path}</translation>
    </message>
    <message>
        <source>Documents ({patterns})</source>
        <translation>文档（{patterns}）</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <source>Open documents to translate</source>
        <translation>打开要翻译的文档</translation>
    </message>
    <message>
        <source>Folder for translated documents</source>
        <translation>译文文档的文件夹</translation>
    </message>
    <message>
        <source>A result&apos;s name must contain {stem} (the original name) and may use {lang} and {suffix}; it cannot name a folder.</source>
        <translation>译文的文件名必须包含 {stem}（原文件名），可以使用 {lang} 和 {suffix}；不能包含文件夹。</translation>
    </message>
    <message>
        <source>beside each original</source>
        <translation>与原文件放在一起</translation>
    </message>
    <message>
        <source>Add documents…</source>
        <translation>添加文档…</translation>
    </message>
    <message>
        <source>Clear finished</source>
        <translation>清除已结束的</translation>
    </message>
    <message>
        <source>Remove the finished, cancelled and failed files from this list</source>
        <translation>从列表中移除已完成、已取消和失败的文件</translation>
    </message>
    <message>
        <source>Save translations:</source>
        <translation>译文保存位置：</translation>
    </message>
    <message>
        <source>Choose folder…</source>
        <translation>选择文件夹…</translation>
    </message>
    <message>
        <source>Beside the original</source>
        <translation>与原文件放在一起</translation>
    </message>
    <message>
        <source>Na&amp;me:</source>
        <translation>名称(&amp;M)：</translation>
    </message>
    <message>
        <source>{stem}: the original name · {lang}: the target language · {suffix}: the extension</source>
        <translation>{stem}：原文件名 · {lang}：目标语言 · {suffix}：扩展名</translation>
    </message>
    <message>
        <source>Name of translated documents</source>
        <translation>译文文档的名称</translation>
    </message>
    <message>
        <source>Drop documents on the window, or use File → Open document…, to translate whole files.</source>
        <translation>把文档拖放到窗口上，或使用“文件 → 打开文档…”，即可翻译整个文件。</translation>
    </message>
</context>
<context>
    <name>GlossaryDialog</name>
    <message>
        <source>Glossary</source>
        <translation>术语表</translation>
    </message>
    <message>
        <source>Terms translated your way in every translation. Leave the target empty to keep a term as it is (names, products, code).</source>
        <translation>每次翻译都按您的方式翻译这些术语。目标留空则原样保留该术语（名称、产品、代码）。</translation>
    </message>
    <message>
        <source>Source term</source>
        <translation>源术语</translation>
    </message>
    <message>
        <source>Target term</source>
        <translation>目标术语</translation>
    </message>
    <message>
        <source>Match case</source>
        <translation>区分大小写</translation>
    </message>
    <message>
        <source>Whole words</source>
        <translation>全词匹配</translation>
    </message>
    <message>
        <source>Empty: keep the source term as it is</source>
        <translation>留空：原样保留源术语</translation>
    </message>
    <message>
        <source>keep as is</source>
        <translation>原样保留</translation>
    </message>
    <message>
        <source>&amp;Add</source>
        <translation>添加(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Remove</source>
        <translation>删除(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Import…</source>
        <translation>导入(&amp;I)…</translation>
    </message>
    <message>
        <source>&amp;Export…</source>
        <translation>导出(&amp;E)…</translation>
    </message>
    <message>
        <source>Apply the glossary to every translation</source>
        <translation>每次翻译都应用术语表</translation>
    </message>
    <message>
        <source>Keep placeholders, links and code as they are</source>
        <translation>占位符、链接和代码保持原样</translation>
    </message>
    <message>
        <source>{name}, %s, web addresses, e-mail addresses and `code` stay verbatim</source>
        <translation>{name}、%s、网址、电子邮件地址和 `code` 原样保留</translation>
    </message>
    <message>
        <source>Import a glossary</source>
        <translation>导入术语表</translation>
    </message>
    <message>
        <source>Glossaries (*.csv *.tsv *.tab *.txt);;All files (*)</source>
        <translation>术语表 (*.csv *.tsv *.tab *.txt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Tab-separated (*.tsv)</source>
        <translation>制表符分隔 (*.tsv)</translation>
    </message>
    <message>
        <source>Comma-separated (*.csv)</source>
        <translation>逗号分隔 (*.csv)</translation>
    </message>
    <message>
        <source>Export the glossary</source>
        <translation>导出术语表</translation>
    </message>
    <message>
        <source>Add the {count} imported entries to the {rows} in the table, or replace the table?</source>
        <translation>把导入的 {count} 条加到表中已有的 {rows} 条里，还是替换整个表？</translation>
    </message>
    <message>
        <source>&amp;Merge</source>
        <translation>合并(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Replace</source>
        <translation>替换(&amp;R)</translation>
    </message>
    <message>
        <source>The glossary was not imported: {reason}</source>
        <translation>术语表未导入：{reason}</translation>
    </message>
    <message>
        <source>Imported {count} entries from {name}.</source>
        <translation>已从 {name} 导入 {count} 条。</translation>
    </message>
    <message>
        <source>Could not export to {path}: {reason}</source>
        <translation>无法导出到 {path}：{reason}</translation>
    </message>
    <message>
        <source>Exported {count} entries to {path}.</source>
        <translation>已把 {count} 条导出到 {path}。</translation>
    </message>
    <message>
        <source>The glossary could not be saved: {reason}</source>
        <translation>无法保存术语表：{reason}</translation>
    </message>
    <message>
        <source>&amp;Glossary…</source>
        <translation>术语表(&amp;G)…</translation>
    </message>
</context>
<context>
    <name>GlossaryStore</name>
    <message>
        <source>{path} could not be read, so it is not overwritten; check its permissions.</source>
        <translation>无法读取 {path}，因此不会覆盖它；请检查其权限。</translation>
    </message>
    <message>
        <source>The glossary could not be read ({reason}); it is left as it is.</source>
        <translation>无法读取术语表（{reason}）；文件保持原样。</translation>
    </message>
    <message>
        <source>The glossary file is damaged ({reason}); it is left as it is and not used.</source>
        <translation>术语表文件已损坏（{reason}）；文件保持原样，不予使用。</translation>
    </message>
    <message>
        <source>The glossary file was damaged ({reason}). It was kept as {path}; the glossary starts empty.</source>
        <translation>术语表文件已损坏（{reason}）。已另存为 {path}；术语表从空白开始。</translation>
    </message>
</context>
<context>
    <name>HistoryPanel</name>
    <message>
        <source>History</source>
        <translation>历史记录</translation>
    </message>
    <message>
        <source>&amp;History</source>
        <translation>历史记录(&amp;H)</translation>
    </message>
    <message>
        <source>Search source and translation</source>
        <translation>搜索原文和译文</translation>
    </message>
    <message>
        <source>Search the history</source>
        <translation>搜索历史记录</translation>
    </message>
    <message>
        <source>Kept translations</source>
        <translation>保存的翻译</translation>
    </message>
    <message>
        <source>Reopen</source>
        <translation>重新打开</translation>
    </message>
    <message>
        <source>Put this source and translation back in the window (Enter)</source>
        <translation>把这段原文和译文放回窗口（Enter）</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Delete the selected entries (Del)</source>
        <translation>删除选中的条目（Del）</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Clear all…</source>
        <translation>全部清除…</translation>
    </message>
    <message>
        <source>Keep a history of translations</source>
        <translation>保存翻译历史</translation>
    </message>
    <message>
        <source>Keep at most</source>
        <translation>最多保存</translation>
    </message>
    <message>
        <source> translations</source>
        <translation> 条翻译</translation>
    </message>
    <message>
        <source>Your history could not be read, so a new, empty one was started.</source>
        <translation>无法读取您的历史记录，已新建一份空白记录。</translation>
    </message>
    <message>
        <source>Your history could not be read, so a new, empty one was started. The damaged file was kept as {path}.</source>
        <translation>无法读取您的历史记录，已新建一份空白记录。损坏的文件已另存为 {path}。</translation>
    </message>
    <message>
        <source>Your history was written by a newer version of Qiao. It is left as it is, and no history is kept until Qiao is updated.</source>
        <translation>您的历史记录由更新版本的 Qiao 写入。它保持原样，在更新 Qiao 之前不会保存历史记录。</translation>
    </message>
    <message>
        <source>The history is not available: {reason}</source>
        <translation>历史记录不可用：{reason}</translation>
    </message>
    <message>
        <source>Nothing in the history matches.</source>
        <translation>历史记录中没有匹配项。</translation>
    </message>
    <message>
        <source>The history is off: new translations are not kept.</source>
        <translation>历史记录已关闭：新的翻译不会保存。</translation>
    </message>
    <message>
        <source>Finished translations appear here.</source>
        <translation>完成的翻译会显示在这里。</translation>
    </message>
    <message>
        <source>Today {time}</source>
        <translation>今天 {time}</translation>
    </message>
    <message>
        <source>{mark} changed by you</source>
        <translation>{mark} 已由您修改</translation>
    </message>
    <message>
        <source>Export the history</source>
        <translation>导出历史记录</translation>
    </message>
    <message>
        <source>The history could not be exported: {reason}</source>
        <translation>无法导出历史记录：{reason}</translation>
    </message>
    <message numerus="yes">
        <source>Exported %n translation(s) to {path}</source>
        <translation>
            <numerusform>已把 %n 条翻译导出到 {path}</numerusform>
        </translation>
    </message>
    <message>
        <source>Clear the history</source>
        <translation>清除历史记录</translation>
    </message>
    <message numerus="yes">
        <source>Delete all %n kept translation(s)? This cannot be undone.</source>
        <translation>
            <numerusform>删除全部 %n 条保存的翻译？此操作无法撤销。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>KeptReview</name>
    <message>
        <source>Kept in {then}; the model in use cannot write {then}, so the translation around it is in {now}.</source>
        <translation>这句保留的是{then}；当前模型不能写{then}，所以它周围的译文是{now}。</translation>
    </message>
    <message>
        <source>Kept from a model that wrote {then}; the model in use writes {now}, as your script setting asks.</source>
        <translation>这句保留自写{then}的模型；当前模型按您的字形设置写{now}。</translation>
    </message>
    <message>
        <source>Kept from before you switched to {now}: it is still in {then}.</source>
        <translation>这是您切换到{now}之前保留的句子，仍是{then}。</translation>
    </message>
    <message>
        <source>Kept from before you switched the direction: it was written for {then}.</source>
        <translation>这是您切换翻译方向之前保留的句子，原为{then}而写。</translation>
    </message>
    <message>
        <source>The glossary asks for “{target}” for “{term}”; this kept version does not have it.</source>
        <translation>术语表要求将“{term}”译为“{target}”，这个保留的版本中没有。</translation>
    </message>
    <message>
        <source>A sentence you kept does not match the current settings; it is marked in the translation.</source>
        <translation>您保留的一个句子与当前设置不符，已在译文中标出。</translation>
    </message>
    <message>
        <source>{n} sentences you kept do not match the current settings; they are marked.</source>
        <translation>您保留的 {n} 个句子与当前设置不符，已在译文中标出。</translation>
    </message>
    <message>
        <source>Translate it again</source>
        <translation>重新翻译该句</translation>
    </message>
    <message>
        <source>Translate them again</source>
        <translation>重新翻译这些句子</translation>
    </message>
    <message>
        <source>Translate this sentence again</source>
        <translation>重新翻译此句</translation>
    </message>
    <message>
        <source>Translate all marked sentences again</source>
        <translation>重新翻译所有标出的句子</translation>
    </message>
</context>
<context>
    <name>LanguageSwitch</name>
    <message>
        <source>Japanese</source>
        <translation>日语</translation>
    </message>
    <message>
        <source>Korean</source>
        <translation>韩语</translation>
    </message>
    <message>
        <source>This text looks {language}; Qiao translates only English and Chinese.</source>
        <translation>这段文字看起来是{language}；Qiao 只翻译英语和中文。</translation>
    </message>
    <message>
        <source>The text is in {language}, so Qiao switched to {pair}. Undo (Ctrl+Z) goes back.</source>
        <translation>文字是{language}，Qiao 已切换为{pair}。撤销（Ctrl+Z）可切换回去。</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>This text looks {language}, but Qiao was started with one model folder (--model) that reads {reads}.</source>
        <translation>这段文字看起来是{language}，但 Qiao 启动时只指定了一个模型文件夹（--model），它读的是{reads}。</translation>
    </message>
    <message>
        <source>This text looks {language}, and no {pair} model is installed to translate it: get opus-mt-{key} in File → Models…</source>
        <translation>这段文字看起来是{language}，但没有安装可翻译它的{pair}模型：请在“文件 → 模型…”中获取 opus-mt-{key}。</translation>
    </message>
    <message>
        <source>Models…</source>
        <translation>模型…</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>&amp;Translate</source>
        <translation>翻译(&amp;T)</translation>
    </message>
    <message>
        <source>Translate (Ctrl+Enter)</source>
        <translation>翻译（Ctrl+Enter）</translation>
    </message>
    <message>
        <source>Translate</source>
        <translation>翻译</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop translating and keep what is done (Esc)</source>
        <translation>停止翻译并保留已完成的部分（Esc）</translation>
    </message>
    <message>
        <source>Cancel translation</source>
        <translation>取消翻译</translation>
    </message>
    <message>
        <source>Translate as you t&amp;ype</source>
        <translation>边输入边翻译(&amp;Y)</translation>
    </message>
    <message>
        <source>Translate as you type</source>
        <translation>边输入边翻译</translation>
    </message>
    <message>
        <source>C&amp;lear</source>
        <translation>清空(&amp;L)</translation>
    </message>
    <message>
        <source>Clear both panes (Ctrl+Shift+Backspace); Ctrl+Z brings the text back</source>
        <translation>清空两侧文本（Ctrl+Shift+Backspace）；按 Ctrl+Z 可恢复原文</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>&amp;Copy translation</source>
        <translation>复制译文(&amp;C)</translation>
    </message>
    <message>
        <source>Copy the translation (Ctrl+Shift+C)</source>
        <translation>复制译文（Ctrl+Shift+C）</translation>
    </message>
    <message>
        <source>Copy translation</source>
        <translation>复制译文</translation>
    </message>
    <message>
        <source>Sentences translated</source>
        <translation>已翻译的句子</translation>
    </message>
    <message>
        <source>%v / %m sentences</source>
        <translation>%v / %m 句</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Model precision (change it in Settings)</source>
        <translation>模型精度（可在设置中更改）</translation>
    </message>
    <message>
        <source>Source and translation</source>
        <translation>原文与译文</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>T&amp;ools</source>
        <translation>工具(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Cancel translation</source>
        <translation>取消翻译(&amp;C)</translation>
    </message>
    <message>
        <source>C&amp;opy translation</source>
        <translation>复制译文(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Stacked layout</source>
        <translation>上下排列(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Larger text</source>
        <translation>放大文字(&amp;L)</translation>
    </message>
    <message>
        <source>S&amp;maller text</source>
        <translation>缩小文字(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;About Qiao</source>
        <translation>关于桥(&amp;A)</translation>
    </message>
    <message>
        <source>S&amp;wap languages</source>
        <translation>交换语言(&amp;W)</translation>
    </message>
    <message>
        <source>&amp;Models…</source>
        <translation>模型(&amp;M)…</translation>
    </message>
    <message>
        <source>Open &amp;document…</source>
        <translation>打开文档(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;Underline unsure words</source>
        <translation>给不确定的词加下划线(&amp;U)</translation>
    </message>
    <message>
        <source>A wavy line under the words the model was unsure of</source>
        <translation>在模型不确定的词下面画波浪线</translation>
    </message>
    <message>
        <source>Scroll panes toge&amp;ther</source>
        <translation>两侧窗格同步滚动(&amp;T)</translation>
    </message>
    <message>
        <source>Translate whole files: {formats}</source>
        <translation>翻译整个文件：{formats}</translation>
    </message>
    <message>
        <source>Translator</source>
        <translation>翻译器</translation>
    </message>
    <message>
        <source>Qiao was started with one model folder (--model), so it cannot swap to another model.</source>
        <translation>桥启动时指定了一个模型文件夹（--model），因此无法切换到其他模型。</translation>
    </message>
    <message>
        <source>No {pair} model is installed; add one with File → Models…</source>
        <translation>未安装{pair}模型。请通过“文件 → 模型…”添加。</translation>
    </message>
    <message>
        <source>Swap the languages and the texts (Ctrl+Shift+S)</source>
        <translation>交换语言和文本（Ctrl+Shift+S）</translation>
    </message>
    <message>
        <source>Swap languages</source>
        <translation>交换语言</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>{name} now translates {languages}: it has the best published quality of the installed models. Choose another with the model indicator in the status bar.</source>
        <translation>{name} 现在用于{languages}：它是已安装模型中公布质量最好的。可在状态栏的模型指示器中选择其他模型。</translation>
    </message>
    <message>
        <source>Started with one model (--model).</source>
        <translation>启动时指定了一个模型（--model）。</translation>
    </message>
    <message>
        <source>Click to choose the model for this direction.</source>
        <translation>点击选择此翻译方向使用的模型。</translation>
    </message>
    <message>
        <source>Translation model</source>
        <translation>翻译模型</translation>
    </message>
    <message>
        <source>{languages} models</source>
        <translation>{languages}模型</translation>
    </message>
    <message>
        <source>No model installed</source>
        <translation>未安装模型</translation>
    </message>
    <message>
        <source>Models…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <source>The model chosen for {languages}, {name}, is damaged ({problem}); Qiao uses {other} instead. Repair it in Models…, or choose another with the model indicator in the status bar.</source>
        <translation>为{languages}选择的模型 {name} 已损坏（{problem}）；Qiao 改用 {other}。可在“模型…”中修复，或在状态栏的模型指示器中选择其他模型。</translation>
    </message>
    <message>
        <source>The model chosen for {languages}, {name}, is not installed any more; Qiao uses {other} instead. Import it again in Models…, or choose another with the model indicator in the status bar.</source>
        <translation>为{languages}选择的模型 {name} 已不再安装；Qiao 改用 {other}。可在“模型…”中重新导入，或在状态栏的模型指示器中选择其他模型。</translation>
    </message>
    <message>
        <source>A better {languages} model is available: {name} ({score}, against {current_score} for {current}). Download it to use it for {languages}, or close this notice: it is not offered again.</source>
        <translation>有更好的{languages}模型可用：{name}（{score}；{current} 为 {current_score}）。下载后即用于{languages}；关闭此提示则不再提示。</translation>
    </message>
    <message>
        <source>Download {languages} model</source>
        <translation>下载{languages}模型</translation>
    </message>
    <message>
        <source>The model in use was removed. Qiao is looking for another {pair} model.</source>
        <translation>正在使用的模型已被删除。桥正在查找另一个{pair}模型。</translation>
    </message>
    <message>
        <source>The model in use, {name}, was replaced by the one just installed; Qiao is loading the new one.</source>
        <translation>正在使用的模型 {name} 已被刚安装的模型替换；桥正在加载新模型。</translation>
    </message>
    <message>
        <source>No file manager could open the model folder. Open it yourself: {path}</source>
        <translation>没有文件管理器能打开模型文件夹。请自行打开：{path}</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <source>Using the {p} model because the {broken} model is damaged; the Precision setting is now {p}.</source>
        <translation>{broken} 模型已损坏，正在使用 {p} 模型；“精度”设置已改为 {p}。</translation>
    </message>
    <message>
        <source>No translation model: see the message above.</source>
        <translation>没有翻译模型：请查看上方的说明。</translation>
    </message>
    <message>
        <source>Could not switch to {p}: {why} Still using {old}.</source>
        <translation>无法切换到 {p}：{why} 仍在使用 {old}。</translation>
    </message>
    <message>
        <source>Still using {p}.</source>
        <translation>仍在使用 {p}。</translation>
    </message>
    <message>
        <source>Nothing to translate: type or paste text on the left.</source>
        <translation>没有可翻译的内容：请在左侧输入或粘贴文本。</translation>
    </message>
    <message>
        <source>Nothing to translate: type or paste {language} text on the left.</source>
        <translation>没有可翻译的内容：请在左侧输入或粘贴{language}文本。</translation>
    </message>
    <message>
        <source>Waiting for the model to load; your text will be translated next.</source>
        <translation>正在等待模型加载；加载完成后立即翻译您的文本。</translation>
    </message>
    <message>
        <source>Translating…</source>
        <translation>正在翻译…</translation>
    </message>
    <message>
        <source>No translation model is loaded.</source>
        <translation>尚未加载翻译模型。</translation>
    </message>
    <message>
        <source>Translation failed.</source>
        <translation>翻译失败。</translation>
    </message>
    <message>
        <source>Translation failed because of an unexpected error in the engine. Try again; if it keeps failing, build or download the model again.</source>
        <translation>翻译引擎出现意外错误，翻译失败。请重试；如果一直失败，请重新构建或下载模型。</translation>
    </message>
    <message>
        <source>Translation failed: {error}</source>
        <translation>翻译失败：{error}</translation>
    </message>
    <message>
        <source>The translation is still being written; edit it once it is done.</source>
        <translation>译文仍在生成中；完成后再编辑。</translation>
    </message>
    <message>
        <source>From history</source>
        <translation>来自历史记录</translation>
    </message>
    <message>
        <source>Reopened from the history; not translated again.</source>
        <translation>从历史记录重新打开；未重新翻译。</translation>
    </message>
    <message>
        <source>Reopened from the history.</source>
        <translation>已从历史记录重新打开。</translation>
    </message>
    <message>
        <source>Translation copied to the clipboard.</source>
        <translation>译文已复制到剪贴板。</translation>
    </message>
    <message>
        <source>&amp;Tools</source>
        <translation>工具(&amp;T)</translation>
    </message>
    <message>
        <source>Chinese script is set to {wanted}, but {limit}: this translation is in {written}.</source>
        <translation>中文字形设为{wanted}，但{limit}。这次的译文是{written}。</translation>
    </message>
    <message>
        <source>{said} {other} writes {wanted}.</source>
        <translation>{said}{other} 可写{wanted}。</translation>
    </message>
    <message>
        <source>Use {model}</source>
        <translation>改用 {model}</translation>
    </message>
    <message>
        <source>{said} No installed {languages} model writes {wanted}; get one in Models.</source>
        <translation>{said}已安装的{languages}模型都不写{wanted}；请在“模型”中获取。</translation>
    </message>
    <message>
        <source>Click “Check for models”, then download a model for {languages} that writes {wanted}, such as {name}.</source>
        <translation>点击“检查模型”，然后下载一个写{wanted}的{languages}模型，例如 {name}。</translation>
    </message>
</context>
<context>
    <name>ModelProblem</name>
    <message>
        <source>The file {file} is missing.</source>
        <translation>缺少文件 {file}。</translation>
    </message>
    <message>
        <source>The file {file} has the wrong size: it is incomplete or was replaced.</source>
        <translation>文件 {file} 的大小不对：文件不完整或已被替换。</translation>
    </message>
    <message>
        <source>The file {file} is damaged: its contents are not what the model lists.</source>
        <translation>文件 {file} 已损坏：其内容与模型清单中记录的不一致。</translation>
    </message>
    <message>
        <source>The file {file} cannot be read.</source>
        <translation>无法读取文件 {file}。</translation>
    </message>
    <message>
        <source>The file {file} points outside the model folder, which Qiao does not allow.</source>
        <translation>文件 {file} 指向模型文件夹之外，桥不允许这样做。</translation>
    </message>
    <message>
        <source>{file} is not an ordinary file.</source>
        <translation>{file} 不是普通文件。</translation>
    </message>
    <message>
        <source>The file {file} is used by the model but not listed (and checked) in its manifest.</source>
        <translation>模型用到了文件 {file}，但它没有列在清单中（因而未经校验）。</translation>
    </message>
    <message>
        <source>The model&apos;s description (manifest.json) is invalid.</source>
        <translation>模型的描述文件（manifest.json）无效。</translation>
    </message>
    <message>
        <source>The model was made for a different version of Qiao.</source>
        <translation>该模型是为其他版本的桥制作的。</translation>
    </message>
    <message>
        <source>This model does not include the precision you chose.</source>
        <translation>该模型不包含你选择的精度。</translation>
    </message>
    <message>
        <source>The file {file} is damaged: it passes its check but cannot be loaded.</source>
        <translation>文件 {file} 已损坏：它通过了校验，但无法加载。</translation>
    </message>
    <message>
        <source>A file of the model is missing.</source>
        <translation>模型缺少一个文件。</translation>
    </message>
    <message>
        <source>The model is damaged: it cannot be loaded.</source>
        <translation>模型已损坏，无法加载。</translation>
    </message>
    <message>
        <source>The model cannot be read.</source>
        <translation>无法读取模型。</translation>
    </message>
    <message>
        <source>The model failed its check.</source>
        <translation>模型未通过校验。</translation>
    </message>
    <message>
        <source>Build or download the model again, then press Try again.</source>
        <translation>请重新构建或下载模型，然后点击“重试”。</translation>
    </message>
    <message>
        <source>Build or download the model again, or update Qiao, then press Try again.</source>
        <translation>请重新构建或下载模型，或者更新桥，然后点击“重试”。</translation>
    </message>
    <message>
        <source>Qiao found a model but could not start it because of an unexpected error. Build or download the model again; if that does not help, please report the details below.</source>
        <translation>桥找到了模型，但因意外错误无法启动它。请重新构建或下载模型；如果仍然不行，请报告下面的详细信息。</translation>
    </message>
</context>
<context>
    <name>ModelStatusPanel</name>
    <message>
        <source>Open model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>Open the model folder in the file manager</source>
        <translation>在文件管理器中打开模型文件夹</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <source>Copy the model folder path</source>
        <translation>复制模型文件夹路径</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Look for the model again</source>
        <translation>重新查找模型</translation>
    </message>
    <message>
        <source>Get a &amp;model…</source>
        <translation>获取模型(&amp;M)…</translation>
    </message>
    <message>
        <source>Import or download a model</source>
        <translation>导入或下载模型</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>Show the technical details</source>
        <translation>显示技术细节</translation>
    </message>
    <message>
        <source>Model problem</source>
        <translation>模型问题</translation>
    </message>
    <message>
        <source>For developers: build a model bundle with “{cmd}” (see the README), then press Try again.</source>
        <translation>开发者：用“{cmd}”构建模型包（参见 README），然后点击“重试”。</translation>
    </message>
    <message>
        <source>No translation model found</source>
        <translation>未找到翻译模型</translation>
    </message>
    <message>
        <source>Looked in:</source>
        <translation>已查找的位置：</translation>
    </message>
    <message>
        <source>The translation model failed its check</source>
        <translation>翻译模型未通过校验</translation>
    </message>
    <message>
        <source>The model folder below is incomplete or damaged. Replace it with a fresh copy of the model:</source>
        <translation>下面的模型文件夹不完整或已损坏。请用一份完好的模型替换它：</translation>
    </message>
    <message>
        <source>… and {n} more</source>
        <translation>……另有 {n} 项</translation>
    </message>
    <message>
        <source>Use {p} instead</source>
        <translation>改用 {p}</translation>
    </message>
    <message>
        <source>Use the {p} model, which passed its check</source>
        <translation>使用已通过校验的 {p} 模型</translation>
    </message>
    <message>
        <source>The {p} model in the same folder is intact: you can use it now.</source>
        <translation>同一文件夹中的 {p} 模型完好无损，现在就可以使用。</translation>
    </message>
    <message>
        <source>Still no model — checked at {time}.</source>
        <translation>仍然没有模型——检查于 {time}。</translation>
    </message>
    <message>
        <source>The translation model could not be loaded</source>
        <translation>无法加载翻译模型</translation>
    </message>
    <message>
        <source>Qiao translates on this computer, without the internet, using a model stored on disk, and none was found for {pair}. Get one with “Get a model…”, or put the model folder ({folder}) here:</source>
        <translation>桥在本机离线翻译，需要使用存放在磁盘上的模型，但没有找到{pair}模型。请点击“获取模型…”，或把模型文件夹（{folder}）放到这里：</translation>
    </message>
    <message>
        <source>Qiao could not look for the model:</source>
        <translation>桥无法查找模型：</translation>
    </message>
</context>
<context>
    <name>ModelsDialog</name>
    <message>
        <source>Given with --model</source>
        <translation>由 --model 指定</translation>
    </message>
    <message>
        <source>Named by QIAO_MODEL_DIR</source>
        <translation>由 QIAO_MODEL_DIR 指定</translation>
    </message>
    <message>
        <source>Beside the program</source>
        <translation>程序所在文件夹</translation>
    </message>
    <message>
        <source>Source folder</source>
        <translation>源代码文件夹</translation>
    </message>
    <message>
        <source>Your models folder</source>
        <translation>您的模型文件夹</translation>
    </message>
    <message>
        <source>{n} MB</source>
        <translation>{n} MB</translation>
    </message>
    <message>
        <source>Not published</source>
        <translation>未公布</translation>
    </message>
    <message>
        <source>Not measured</source>
        <translation>未测量</translation>
    </message>
    <message>
        <source>{n} tokens/s</source>
        <translation>每秒 {n} 个词元</translation>
    </message>
    <message>
        <source>Family: {family}</source>
        <translation>系列：{family}</translation>
    </message>
    <message>
        <source>Writes: {scripts}</source>
        <translation>书写：{scripts}</translation>
    </message>
    <message>
        <source>Quality: {score} on {test_set} ({source})</source>
        <translation>质量：{score}（{test_set}；{source}）</translation>
    </message>
    <message>
        <source>Quality: not published</source>
        <translation>质量：未公布</translation>
    </message>
    <message>
        <source>Speed: {n} tokens/s ({precision}, {threads} threads, {machine})</source>
        <translation>速度：每秒 {n} 个词元（{precision}，{threads} 个线程，{machine}）</translation>
    </message>
    <message>
        <source>Size: {size}</source>
        <translation>大小：{size}</translation>
    </message>
    <message>
        <source>Licence: {licence}</source>
        <translation>许可证：{licence}</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Installed models</source>
        <translation>已安装的模型</translation>
    </message>
    <message>
        <source>Languages</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Writes</source>
        <translation>书写</translation>
    </message>
    <message>
        <source>Family</source>
        <translation>系列</translation>
    </message>
    <message>
        <source>Quality</source>
        <translation>质量</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Licence</source>
        <translation>许可证</translation>
    </message>
    <message>
        <source>Location</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>In use</source>
        <translation>使用中</translation>
    </message>
    <message>
        <source>&amp;Import…</source>
        <translation>导入(&amp;I)…</translation>
    </message>
    <message>
        <source>From a &amp;folder…</source>
        <translation>从文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>From an &amp;archive (.zip, .tar…)…</source>
        <translation>从压缩包(&amp;A)（.zip、.tar…）…</translation>
    </message>
    <message>
        <source>&amp;Verify</source>
        <translation>校验(&amp;V)</translation>
    </message>
    <message>
        <source>Check every file of the selected model against its manifest</source>
        <translation>按清单逐一校验所选模型的每个文件</translation>
    </message>
    <message>
        <source>&amp;Remove…</source>
        <translation>删除(&amp;R)…</translation>
    </message>
    <message>
        <source>&amp;Use for its direction</source>
        <translation>用于该翻译方向(&amp;U)</translation>
    </message>
    <message>
        <source>C&amp;heck for models</source>
        <translation>查找可用模型(&amp;H)</translation>
    </message>
    <message>
        <source>Download the list of available models from the model server</source>
        <translation>从模型服务器下载可用模型列表</translation>
    </message>
    <message>
        <source>Models available for download</source>
        <translation>可下载的模型</translation>
    </message>
    <message>
        <source>Installed</source>
        <translation>已安装</translation>
    </message>
    <message>
        <source>&amp;Download</source>
        <translation>下载(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Cancel</source>
        <translation>取消(&amp;C)</translation>
    </message>
    <message>
        <source>Stop the running operation; nothing is changed</source>
        <translation>停止正在进行的操作；不会做任何更改</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Qiao asks the model server only when you click “Check for models” or “Download”.</source>
        <translation>只有在您点击“查找可用模型”或“下载”时，桥才会连接模型服务器。</translation>
    </message>
    <message>
        <source>Not checked</source>
        <translation>未校验</translation>
    </message>
    <message>
        <source>Verified</source>
        <translation>已校验</translation>
    </message>
    <message>
        <source>Damaged: {problem}</source>
        <translation>已损坏：{problem}</translation>
    </message>
    <message>
        <source>Unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>No model is installed. Import one, or check for models to download.</source>
        <translation>尚未安装模型。请导入一个，或查找可下载的模型。</translation>
    </message>
    <message>
        <source>Recommended</source>
        <translation>推荐</translation>
    </message>
    <message>
        <source>Translate {languages} with this model from now on</source>
        <translation>今后用此模型进行{languages}翻译</translation>
    </message>
    <message>
        <source>Qiao was started with one model (--model): there is nothing to choose</source>
        <translation>Qiao 启动时指定了一个模型（--model），无可选择</translation>
    </message>
    <message>
        <source>Only models in your models folder can be removed here; this one is: {where}.</source>
        <translation>这里只能删除您的模型文件夹中的模型；此模型位于：{where}。</translation>
    </message>
    <message>
        <source>Delete the selected model from your models folder</source>
        <translation>从您的模型文件夹中删除所选模型</translation>
    </message>
    <message>
        <source>Import a model folder</source>
        <translation>导入模型文件夹</translation>
    </message>
    <message>
        <source>Import a model archive</source>
        <translation>导入模型压缩包</translation>
    </message>
    <message>
        <source>Model archives ({patterns})</source>
        <translation>模型压缩包 ({patterns})</translation>
    </message>
    <message>
        <source>Replace model</source>
        <translation>替换模型</translation>
    </message>
    <message>
        <source>A model with the same name as “{name}” is installed already. Replace it? The installed one is kept until the new one has been checked.</source>
        <translation>已安装了与“{name}”同名的模型。要替换它吗？新模型校验通过之前，已安装的模型会保留。</translation>
    </message>
    <message>
        <source>Remove model</source>
        <translation>删除模型</translation>
    </message>
    <message>
        <source>Delete “{name}” ({pair}) from {path}? This cannot be undone.</source>
        <translation>要从 {path} 删除“{name}”（{pair}）吗？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Importing {path}…</source>
        <translation>正在导入 {path}…</translation>
    </message>
    <message>
        <source>{name} now translates {languages}.</source>
        <translation>现在由 {name} 进行{languages}翻译。</translation>
    </message>
    <message>
        <source>Checking {name}…</source>
        <translation>正在校验 {name}…</translation>
    </message>
    <message>
        <source>Removing {name}…</source>
        <translation>正在删除 {name}…</translation>
    </message>
    <message>
        <source>Asking the model server which models are available…</source>
        <translation>正在向模型服务器查询可用模型…</translation>
    </message>
    <message>
        <source>The model server does not list {id}; nothing was downloaded.</source>
        <translation>模型服务器上没有 {id}；未下载任何内容。</translation>
    </message>
    <message>
        <source>Downloading {name}…</source>
        <translation>正在下载 {name}…</translation>
    </message>
    <message>
        <source>{done} of {total} MB</source>
        <translation>{done} / {total} MB</translation>
    </message>
    <message>
        <source>{progress} · {rate} MB/s</source>
        <translation>{progress} · {rate} MB/s</translation>
    </message>
    <message>
        <source>Every file is intact.</source>
        <translation>所有文件完好。</translation>
    </message>
    <message>
        <source>The model is damaged: {problem}</source>
        <translation>模型已损坏：{problem}</translation>
    </message>
    <message>
        <source>Imported {name}.</source>
        <translation>已导入 {name}。</translation>
    </message>
    <message>
        <source>The model was removed.</source>
        <translation>模型已删除。</translation>
    </message>
    <message>
        <source>{n} models are available.</source>
        <translation>有 {n} 个可用模型。</translation>
    </message>
    <message>
        <source>The model server lists no models.</source>
        <translation>模型服务器上没有列出任何模型。</translation>
    </message>
    <message>
        <source>Downloaded and checked {name}.</source>
        <translation>已下载并校验 {name}。</translation>
    </message>
    <message>
        <source>Cancelled; nothing was changed.</source>
        <translation>已取消；未做任何更改。</translation>
    </message>
    <message>
        <source>Could not list the installed models: {error}</source>
        <translation>无法列出已安装的模型：{error}</translation>
    </message>
    <message>
        <source>Replacing the installed model…</source>
        <translation>正在替换已安装的模型…</translation>
    </message>
    <message>
        <source>The model is installed already; nothing was changed.</source>
        <translation>该模型已安装；未做任何更改。</translation>
    </message>
    <message>
        <source>Qiao could not reach the model server. You may be offline; nothing was changed.</source>
        <translation>桥无法连接模型服务器。您可能处于离线状态；未做任何更改。</translation>
    </message>
    <message>
        <source>Could not check the model: {error}</source>
        <translation>无法校验模型：{error}</translation>
    </message>
    <message>
        <source>Could not import the model; nothing was changed. {error}</source>
        <translation>无法导入模型；未做任何更改。{error}</translation>
    </message>
    <message>
        <source>Could not remove the model: {error}</source>
        <translation>无法删除模型：{error}</translation>
    </message>
    <message>
        <source>Could not read the list of models: {error}</source>
        <translation>无法读取模型列表：{error}</translation>
    </message>
    <message>
        <source>The download failed; nothing was changed. {error}</source>
        <translation>下载失败；未做任何更改。{error}</translation>
    </message>
</context>
<context>
    <name>NoticeBar</name>
    <message>
        <source>Notice</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Dismiss notice</source>
        <translation>关闭提示</translation>
    </message>
</context>
<context>
    <name>PairText</name>
    <message>
        <source>English</source>
        <translation>英语</translation>
    </message>
    <message>
        <source>Chinese</source>
        <translation>中文</translation>
    </message>
    <message>
        <source>E&amp;nglish</source>
        <translation>英语(&amp;N)</translation>
    </message>
    <message>
        <source>Chi&amp;nese</source>
        <translation>中文(&amp;N)</translation>
    </message>
    <message>
        <source>English to Chinese</source>
        <translation>英译中</translation>
    </message>
    <message>
        <source>Chinese to English</source>
        <translation>中译英</translation>
    </message>
    <message>
        <source>Simplified</source>
        <translation>简体</translation>
    </message>
    <message>
        <source>Traditional</source>
        <translation>繁体</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>{variant} only</source>
        <translation>仅{variant}</translation>
    </message>
    <message>
        <source>{model} writes {scripts}</source>
        <translation>{model} 可写的字形：{scripts}</translation>
    </message>
    <message>
        <source>{language} ({variant})</source>
        <translation>{language}（{variant}）</translation>
    </message>
    <message>
        <source>{source} to {target}</source>
        <translation>{source}译{target}</translation>
    </message>
</context>
<context>
    <name>QuickPopup</name>
    <message>
        <source>The clipboard holds no text (an image or files?).</source>
        <translation>剪贴板里没有文字（是图片或文件？）。</translation>
    </message>
    <message>
        <source>Nothing selected or copied: select some text, then try again.</source>
        <translation>没有选中或复制的内容：请先选中一些文字，再试一次。</translation>
    </message>
    <message>
        <source>The text is too long for the popup ({count:,} characters; at most {limit:,}).</source>
        <translation>文字太长，弹窗放不下（{count:,} 个字符；最多 {limit:,} 个）。</translation>
    </message>
    <message>
        <source>The clipboard holds a password; not translated.</source>
        <translation>剪贴板里是密码，不翻译。</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>Quick translate</source>
        <translation>快速翻译</translation>
    </message>
    <message>
        <source>Translation</source>
        <translation>译文</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>复制(&amp;C)</translation>
    </message>
    <message>
        <source>Open in &amp;window</source>
        <translation>在窗口中打开(&amp;W)</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>固定</translation>
    </message>
    <message>
        <source>Pinned: stays open until you close it</source>
        <translation>已固定：保持打开，直到你关闭它</translation>
    </message>
    <message>
        <source>Pin: keep the popup open</source>
        <translation>固定：让弹窗保持打开</translation>
    </message>
    <message>
        <source>Close (Esc)</source>
        <translation>关闭（Esc）</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Translating…</source>
        <translation>正在翻译…</translation>
    </message>
    <message>
        <source>Translation failed</source>
        <translation>翻译失败</translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation>日语</translation>
    </message>
    <message>
        <source>Korean</source>
        <translation>韩语</translation>
    </message>
    <message>
        <source>This text looks {language}; Qiao translates only English and Chinese.</source>
        <translation>这段文字看起来是{language}；Qiao 只翻译英语和中文。</translation>
    </message>
    <message>
        <source>This text looks {language}, and no {pair} model is installed: get opus-mt-{key} in Qiao&apos;s File → Models…</source>
        <translation>这段文字看起来是{language}，但没有安装{pair}模型：请在 Qiao 的“文件 → 模型…”中获取 opus-mt-{key}。</translation>
    </message>
    <message>
        <source>{model} writes {scripts}, not {wanted}.</source>
        <translation>{model} 可写的字形：{scripts}，不能写{wanted}。</translation>
    </message>
</context>
<context>
    <name>QuickShortcut</name>
    <message>
        <source>“{sequence}” is not a single shortcut such as Ctrl+Alt+T.</source>
        <translation>“{sequence}”不是单个快捷键（例如 Ctrl+Alt+T）。</translation>
    </message>
    <message>
        <source>“{sequence}” uses a key a global shortcut cannot use.</source>
        <translation>“{sequence}”用了全局快捷键不能用的键。</translation>
    </message>
    <message>
        <source>“{sequence}” needs Ctrl, Alt or Meta, or it would take a key used for typing.</source>
        <translation>“{sequence}”需要 Ctrl、Alt 或 Meta，否则会占用打字用的键。</translation>
    </message>
    <message>
        <source>This desktop does not let applications grab keys: bind `qiao popup` as a custom shortcut in GNOME/KDE settings.</source>
        <translation>此桌面不允许应用程序占用按键：请在 GNOME/KDE 设置中把 `qiao popup` 设为自定义快捷键。</translation>
    </message>
    <message>
        <source>This keyboard has no key for “{sequence}”.</source>
        <translation>此键盘上没有“{sequence}”对应的键。</translation>
    </message>
    <message>
        <source>{sequence} is already taken by another application.</source>
        <translation>{sequence} 已被其他应用程序占用。</translation>
    </message>
    <message>
        <source>macOS refused {sequence} (error {code}).</source>
        <translation>macOS 拒绝了 {sequence}（错误 {code}）。</translation>
    </message>
    <message>
        <source>Asking the desktop to bind {sequence}…</source>
        <translation>正在请求桌面绑定 {sequence}…</translation>
    </message>
    <message>
        <source>The desktop did not bind {sequence} (is it taken by another shortcut?).</source>
        <translation>桌面没有绑定 {sequence}（是否已被其他快捷键占用？）。</translation>
    </message>
    <message>
        <source>The desktop bound the shortcut to {sequence}.</source>
        <translation>桌面已将快捷键绑定为 {sequence}。</translation>
    </message>
    <message>
        <source>The desktop&apos;s shortcut dialog was cancelled, so {sequence} is not bound.</source>
        <translation>桌面的快捷键对话框已被取消，{sequence} 未绑定。</translation>
    </message>
    <message>
        <source>The desktop refused {sequence} (error {code}); bind `qiao popup` as a custom shortcut in GNOME/KDE settings instead.</source>
        <translation>桌面拒绝了 {sequence}（错误 {code}）；请改在 GNOME/KDE 设置中把 `qiao popup` 设为自定义快捷键。</translation>
    </message>
    <message>
        <source>The desktop portal failed ({name}); bind `qiao popup` as a custom shortcut in GNOME/KDE settings instead.</source>
        <translation>桌面门户出错（{name}）；请改在 GNOME/KDE 设置中把 `qiao popup` 设为自定义快捷键。</translation>
    </message>
    <message>
        <source>Quick translate: the selection or the clipboard in Qiao&apos;s popup</source>
        <translation>快速翻译：在 Qiao 的弹窗中翻译选中的文字或剪贴板</translation>
    </message>
    <message>
        <source>Windows refused {sequence} (error {code}).</source>
        <translation>Windows 拒绝了 {sequence}（错误 {code}）。</translation>
    </message>
    <message>
        <source>libX11 is not installed, so no X11 shortcut can be registered.</source>
        <translation>未安装 libX11，无法注册 X11 快捷键。</translation>
    </message>
    <message>
        <source>Cannot reach the X display “{name}”.</source>
        <translation>无法连接 X 显示“{name}”。</translation>
    </message>
    <message>
        <source>The X server refused {sequence} (error {code}).</source>
        <translation>X 服务器拒绝了 {sequence}（错误 {code}）。</translation>
    </message>
</context>
<context>
    <name>ReviewPage</name>
    <message>
        <source>&amp;Underline words the model is unsure of</source>
        <translation>给模型不确定的词加下划线(&amp;U)</translation>
    </message>
    <message>
        <source>Underline words the model is unsure of</source>
        <translation>给模型不确定的词加下划线</translation>
    </message>
    <message>
        <source>A wavy line under the words the model gave a low probability: the places worth a second look.</source>
        <translation>在模型给出低概率的词下面画波浪线：这些地方值得再看一眼。</translation>
    </message>
    <message>
        <source> %</source>
        <translation> %</translation>
    </message>
    <message>
        <source>Unsure below this probability</source>
        <translation>低于此概率视为不确定</translation>
    </message>
    <message>
        <source>A word is underlined when the model&apos;s probability for it is below this; higher marks more.</source>
        <translation>模型对某个词的概率低于此值时加下划线；值越高，标记越多。</translation>
    </message>
    <message>
        <source>&amp;Scroll the panes together</source>
        <translation>两侧窗格同步滚动(&amp;S)</translation>
    </message>
    <message>
        <source>Scroll the panes together</source>
        <translation>两侧窗格同步滚动</translation>
    </message>
    <message>
        <source>Scrolling one pane shows the same sentences in the other.</source>
        <translation>滚动一侧窗格时，另一侧显示相同的句子。</translation>
    </message>
    <message>
        <source>Unsure &amp;below:</source>
        <translation>不确定阈值(&amp;B)：</translation>
    </message>
</context>
<context>
    <name>SessionStore</name>
    <message>
        <source>Restored</source>
        <translation>已恢复</translation>
    </message>
    <message>
        <source>Out of date</source>
        <translation>已过时</translation>
    </message>
    <message>
        <source>The translation from {when} was restored; it matches the source text and the settings.</source>
        <translation>已恢复 {when} 的译文；它与原文和当前设置一致。</translation>
    </message>
    <message>
        <source>This translation is from {when}; the source text or the settings changed since. Press Translate to update it.</source>
        <translation>此译文来自 {when}；此后原文或设置已更改。请按“翻译”更新译文。</translation>
    </message>
    <message>
        <source>Your text is not being saved: Qiao cannot write to {folder} ({reason}). It keeps trying; until then, keep a copy of your text elsewhere.</source>
        <translation>您的文本未能保存：Qiao 无法写入 {folder}（{reason}）。Qiao 会继续尝试；在此之前，请将文本另存一份。</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Translation direction</source>
        <translation>翻译方向</translation>
    </message>
    <message>
        <source>Chinese script</source>
        <translation>中文字形</translation>
    </message>
    <message>
        <source>Quality</source>
        <translation>质量</translation>
    </message>
    <message>
        <source>Join lines broken by wrapping</source>
        <translation>合并因换行断开的句子</translation>
    </message>
    <message>
        <source>Normalise punctuation</source>
        <translation>规范标点</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>线程数</translation>
    </message>
    <message>
        <source>Translate as you type</source>
        <translation>边输入边翻译</translation>
    </message>
    <message>
        <source>Delay</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Text size</source>
        <translation>文字大小</translation>
    </message>
    <message>
        <source>Interface language</source>
        <translation>界面语言</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <source>Stacked layout</source>
        <translation>上下排列</translation>
    </message>
    <message>
        <source>Window size and position</source>
        <translation>窗口大小和位置</translation>
    </message>
    <message>
        <source>Pane sizes</source>
        <translation>窗格大小</translation>
    </message>
    <message>
        <source>Folder for translated documents</source>
        <translation>译文文档的文件夹</translation>
    </message>
    <message>
        <source>Name of translated documents</source>
        <translation>译文文档的名称</translation>
    </message>
    <message>
        <source>Last folder documents were opened from</source>
        <translation>上次打开文档的文件夹</translation>
    </message>
    <message>
        <source>Keep running in the tray when the window is closed</source>
        <translation>关闭窗口后在托盘中继续运行</translation>
    </message>
    <message>
        <source>Tray notice shown</source>
        <translation>已显示托盘提示</translation>
    </message>
    <message>
        <source>Start Qiao when I log in</source>
        <translation>登录时启动桥</translation>
    </message>
    <message>
        <source>Quick translate shortcut</source>
        <translation>快速翻译快捷键</translation>
    </message>
    <message>
        <source>Copy twice to translate</source>
        <translation>复制两次即翻译</translation>
    </message>
    <message>
        <source>Translate English copied to the clipboard</source>
        <translation>翻译复制到剪贴板的英文</translation>
    </message>
    <message>
        <source>Clipboard watching paused</source>
        <translation>已暂停监视剪贴板</translation>
    </message>
    <message>
        <source>Local translation API</source>
        <translation>本地翻译 API</translation>
    </message>
    <message>
        <source>Underline words the model is unsure of</source>
        <translation>给模型不确定的词加下划线</translation>
    </message>
    <message>
        <source>Unsure below</source>
        <translation>低于此概率视为不确定</translation>
    </message>
    <message>
        <source>Scroll the panes together</source>
        <translation>两侧窗格同步滚动</translation>
    </message>
    <message>
        <source>Apply the glossary</source>
        <translation>应用术语表</translation>
    </message>
    <message>
        <source>Keep a history of translations</source>
        <translation>保存翻译历史</translation>
    </message>
    <message>
        <source>History size</source>
        <translation>历史记录条数</translation>
    </message>
    <message>
        <source>API port</source>
        <translation>API 端口</translation>
    </message>
    <message>
        <source>API key file</source>
        <translation>API 密钥文件</translation>
    </message>
    <message>
        <source>English → Chinese model</source>
        <translation>英译中模型</translation>
    </message>
    <message>
        <source>Chinese → English model</source>
        <translation>中译英模型</translation>
    </message>
    <message>
        <source>Last folder models were imported from</source>
        <translation>上次导入模型的文件夹</translation>
    </message>
    <message>
        <source>Better models offered</source>
        <translation>已提示过的更好模型</translation>
    </message>
    <message>
        <source>Script notices shown</source>
        <translation>已显示的字形提示</translation>
    </message>
    <message>
        <source>Your settings file could not be read, so Qiao started with the default settings.</source>
        <translation>无法读取您的设置文件，桥已使用默认设置启动。</translation>
    </message>
    <message>
        <source>Your settings file could not be read, so Qiao started with the default settings. The unreadable file was kept as {path}.</source>
        <translation>无法读取您的设置文件，桥已使用默认设置启动。无法读取的文件已保留为 {path}。</translation>
    </message>
    <message>
        <source>The setting “{name}” had an invalid value ({value}) and was reset to its default.</source>
        <translation>设置“{name}”的值无效（{value}），已恢复为默认值。</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>INT8: faster, smaller (recommended)</source>
        <translation>INT8：更快、更小（推荐）</translation>
    </message>
    <message>
        <source>FP32: full precision, slower</source>
        <translation>FP32：全精度，较慢</translation>
    </message>
    <message>
        <source>Chinese script</source>
        <translation>中文字形</translation>
    </message>
    <message>
        <source>&amp;General</source>
        <translation>常规(&amp;G)</translation>
    </message>
    <message>
        <source>Simplified (简体)</source>
        <translation>简体</translation>
    </message>
    <message>
        <source>Traditional (繁體)</source>
        <translation>繁體</translation>
    </message>
    <message>
        <source>Model default ({n} beams)</source>
        <translation>模型默认（{n} 束）</translation>
    </message>
    <message>
        <source>Model default</source>
        <translation>模型默认</translation>
    </message>
    <message>
        <source>Quality</source>
        <translation>质量</translation>
    </message>
    <message>
        <source>Fastest (greedy)</source>
        <translation>最快（贪心解码）</translation>
    </message>
    <message>
        <source>Variant</source>
        <translation>变体</translation>
    </message>
    <message>
        <source>Model default (greedy)</source>
        <translation>模型默认（贪心解码）</translation>
    </message>
    <message>
        <source>Balanced (2 beams)</source>
        <translation>均衡（2 束）</translation>
    </message>
    <message>
        <source>Better (4 beams)</source>
        <translation>较好（4 束）</translation>
    </message>
    <message>
        <source>Best (6 beams, slowest)</source>
        <translation>最佳（6 束，最慢）</translation>
    </message>
    <message>
        <source>&amp;Join lines broken by wrapping</source>
        <translation>合并因换行断开的句子(&amp;J)</translation>
    </message>
    <message>
        <source>Join lines broken by wrapping</source>
        <translation>合并因换行断开的句子</translation>
    </message>
    <message>
        <source>Text copied from a PDF or an e-mail often breaks sentences over lines; translate them whole.</source>
        <translation>从 PDF 或电子邮件复制的文字常把一句话断成几行；合并后按整句翻译。</translation>
    </message>
    <message>
        <source>&amp;Normalise punctuation (full-width between Chinese)</source>
        <translation>规范标点（中文之间用全角）(&amp;N)</translation>
    </message>
    <message>
        <source>Normalise punctuation</source>
        <translation>规范标点</translation>
    </message>
    <message>
        <source>Write ！？，：； between Chinese characters; numbers, Latin text and web addresses stay.</source>
        <translation>中文字符之间使用全角！？，：；；数字、拉丁文字和网址保持不变。</translation>
    </message>
    <message>
        <source>This model has no {v} files.</source>
        <translation>此模型没有 {v} 文件。</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>线程数</translation>
    </message>
    <message>
        <source>Translate as you type</source>
        <translation>边输入边翻译</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> 毫秒</translation>
    </message>
    <message>
        <source>Delay before translating while typing</source>
        <translation>输入停顿多久后开始翻译</translation>
    </message>
    <message>
        <source> pt</source>
        <translation> 磅</translation>
    </message>
    <message>
        <source>Text size</source>
        <translation>文字大小</translation>
    </message>
    <message>
        <source>Interface language</source>
        <translation>界面语言</translation>
    </message>
    <message>
        <source>System default</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>&amp;Precision:</source>
        <translation>精度(&amp;P)：</translation>
    </message>
    <message>
        <source>Chinese &amp;script:</source>
        <translation>中文字形(&amp;S)：</translation>
    </message>
    <message>
        <source>&amp;Variant:</source>
        <translation>变体(&amp;V)：</translation>
    </message>
    <message>
        <source>&amp;Quality:</source>
        <translation>质量(&amp;Q)：</translation>
    </message>
    <message>
        <source>&amp;Threads:</source>
        <translation>线程数(&amp;T)：</translation>
    </message>
    <message>
        <source>&amp;Delay:</source>
        <translation>延迟(&amp;D)：</translation>
    </message>
    <message>
        <source>Text si&amp;ze:</source>
        <translation>文字大小(&amp;Z)：</translation>
    </message>
    <message>
        <source>Interface &amp;language:</source>
        <translation>界面语言(&amp;L)：</translation>
    </message>
    <message>
        <source>&amp;Appearance:</source>
        <translation>外观(&amp;A)：</translation>
    </message>
    <message>
        <source>Re&amp;view</source>
        <translation>审阅(&amp;V)</translation>
    </message>
    <message>
        <source>Des&amp;ktop</source>
        <translation>桌面(&amp;K)</translation>
    </message>
    <message>
        <source>{limit}: its translations are in {written}.</source>
        <translation>{limit}。它的译文是{written}。</translation>
    </message>
</context>
<context>
    <name>SourcePane</name>
    <message>
        <source>&amp;Source text</source>
        <translation>原文(&amp;S)</translation>
    </message>
    <message>
        <source>Paste or type text here, then press Ctrl+Enter.</source>
        <translation>在此粘贴或输入文本，然后按 Ctrl+Enter。</translation>
    </message>
    <message>
        <source>Source text</source>
        <translation>原文</translation>
    </message>
    <message>
        <source>Paste or type {language} text here, then press Ctrl+Enter.</source>
        <translation>在此粘贴或输入{language}文本，然后按 Ctrl+Enter。</translation>
    </message>
    <message>
        <source>{language} source text</source>
        <translation>{language}原文</translation>
    </message>
    <message>
        <source>{n} characters</source>
        <translation>{n} 个字</translation>
    </message>
    <message>
        <source>{n} character</source>
        <translation>{n} 个字</translation>
    </message>
    <message>
        <source>{n} words</source>
        <translation>{n} 个单词</translation>
    </message>
    <message>
        <source>{n} word</source>
        <translation>{n} 个单词</translation>
    </message>
</context>
<context>
    <name>Status</name>
    <message>
        <source>{n} ms</source>
        <translation>{n} 毫秒</translation>
    </message>
    <message>
        <source>{n} s</source>
        <translation>{n} 秒</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>total {t}</source>
        <translation>总耗时 {t}</translation>
    </message>
    <message>
        <source>first token {t}</source>
        <translation>首个词元 {t}</translation>
    </message>
    <message>
        <source>{n} token</source>
        <translation>{n} 个词元</translation>
    </message>
    <message>
        <source>{n} tokens</source>
        <translation>{n} 个词元</translation>
    </message>
    <message>
        <source>{n} tokens/s</source>
        <translation>每秒 {n} 个词元</translation>
    </message>
    <message>
        <source>{done} of {total} sentences reused</source>
        <translation>{total} 句中复用了 {done} 句</translation>
    </message>
    <message>
        <source>reused, nothing decoded</source>
        <translation>已复用，未解码</translation>
    </message>
    <message>
        <source>Cancelled after {done} of {total} sentences; the part already translated is kept.</source>
        <translation>已在第 {done}/{total} 句后取消；已翻译的部分已保留。</translation>
    </message>
    <message>
        <source>Cancelled; the part already translated is kept.</source>
        <translation>已取消；已翻译的部分已保留。</translation>
    </message>
    <message>
        <source>Switching to {p}…</source>
        <translation>正在切换到 {p}…</translation>
    </message>
    <message>
        <source>Loading the translation model ({p})…</source>
        <translation>正在加载翻译模型（{p}）…</translation>
    </message>
    <message>
        <source>Switched to {p} in {t}.</source>
        <translation>已切换到 {p}，用时 {t}。</translation>
    </message>
    <message>
        <source>Model {m} ({p}) loaded in {t}.</source>
        <translation>模型 {m}（{p}）已加载，用时 {t}。</translation>
    </message>
</context>
<context>
    <name>TargetPane</name>
    <message>
        <source>Translation</source>
        <translation>译文</translation>
    </message>
    <message>
        <source>The translation appears here as it is written.</source>
        <translation>译文会在生成时显示在这里。</translation>
    </message>
    <message>
        <source>The {language} translation appears here as it is written.</source>
        <translation>{language}译文会在生成时显示在这里。</translation>
    </message>
    <message>
        <source>{language} translation</source>
        <translation>{language}译文</translation>
    </message>
    <message>
        <source>Read-only; select and copy the translation</source>
        <translation>只读；可选中并复制译文</translation>
    </message>
    <message>
        <source>Edit the translation; your changes are kept when the source is translated again</source>
        <translation>可编辑译文；重新翻译原文时会保留您的修改</translation>
    </message>
    <message>
        <source>The model was unsure of this word (Alt+Down lists alternatives).</source>
        <translation>模型对这个词不确定（按 Alt+↓ 可列出其他译法）。</translation>
    </message>
    <message>
        <source>The translation is much longer or shorter than the source suggests.</source>
        <translation>译文比原文应有的长度长得多或短得多。</translation>
    </message>
    <message>
        <source>A number, address or code of the source is missing or changed.</source>
        <translation>原文中的数字、地址或代码缺失或被改动。</translation>
    </message>
    <message>
        <source>The model repeated itself; the repetition was cut.</source>
        <translation>模型出现了重复；重复部分已截断。</translation>
    </message>
    <message>
        <source>A subtitle note such as “(掌声)” was kept out of the translation.</source>
        <translation>已阻止“(掌声)”之类的字幕注释进入译文。</translation>
    </message>
    <message>
        <source>A glossary term could not be used.</source>
        <translation>有术语表中的术语未能使用。</translation>
    </message>
    <message>
        <source>The glossary term “{term}” could not be placed.</source>
        <translation>术语表中的术语“{term}”未能放入译文。</translation>
    </message>
    <message>
        <source>You edited this sentence; translating again keeps your version.</source>
        <translation>您编辑过这句话；重新翻译会保留您的版本。</translation>
    </message>
    <message>
        <source>You chose this alternative; translating again keeps it.</source>
        <translation>您选择了这个替换译法；重新翻译会保留它。</translation>
    </message>
    <message>
        <source>Your version of this sentence, kept from your earlier edit.</source>
        <translation>这句话是您的版本，保留自您之前的编辑。</translation>
    </message>
</context>
<context>
    <name>TrayIcon</name>
    <message>
        <source>Qiao: offline translator</source>
        <translation>桥：离线翻译</translation>
    </message>
    <message>
        <source>&amp;Quick translate</source>
        <translation>快速翻译(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Pause clipboard watching</source>
        <translation>暂停监视剪贴板(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Quit Qiao</source>
        <translation>退出桥(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Hide window</source>
        <translation>隐藏窗口(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Show window</source>
        <translation>显示窗口(&amp;S)</translation>
    </message>
</context>
<context>
    <name>window</name>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
</context>
</TS>
