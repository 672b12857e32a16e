//! What the operator types in `chat`: on a terminal, lines read with
//! rustyline (editing, history kept in the user's state directory), one line
//! per request so the terminal is left alone while a turn prints; piped
//! input, read ahead line by line.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, Mutex};

/// One thing typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A line.
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
}

enum Source {
    /// Lines read ahead from a pipe or file; closed at end of input.
    Piped(mpsc::Receiver<String>),
    /// The terminal: a prompt is sent, the line comes back.
    Terminal(std::sync::mpsc::Sender<(String, oneshot::Sender<Option<Input>>)>),
}

/// The operator's input, shared by the chat loop and the approver (which
/// reads while a turn waits for an answer).
pub struct Lines(Mutex<Source>);

impl Lines {
    /// Standard input: line editing when it and stdout are terminals.
    pub fn stdin() -> Arc<Self> {
        use std::io::IsTerminal;
        let source = if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
            match terminal() {
                Some(requests) => Source::Terminal(requests),
                None => Source::Piped(piped()),
            }
        } else {
            Source::Piped(piped())
        };
        Arc::new(Self(Mutex::new(source)))
    }

    /// The next input after showing `prompt` (on a terminal); `None` at end
    /// of input.
    pub async fn read(&self, prompt: &str) -> Option<Input> {
        match &mut *self.0.lock().await {
            Source::Piped(rx) => rx.recv().await.map(Input::Line),
            Source::Terminal(requests) => {
                let (tx, rx) = oneshot::channel();
                requests.send((prompt.to_string(), tx)).ok()?;
                rx.await.ok().flatten()
            }
        }
    }
}

fn piped() -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel(16);
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Where chat history is kept: `$XDG_STATE_HOME/clawhost/chat_history`, else
/// `~/.local/state/clawhost/chat_history`; the file is 0600 in a 0700
/// directory.
fn history_file() -> Option<std::path::PathBuf> {
    let dir = clawhost_config::xdg_dir("XDG_STATE_HOME", ".local/state")?;
    std::fs::create_dir_all(&dir).ok()?;
    // What the user typed is conversation: private, whatever the umask.
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let path = dir.join("chat_history");
    let private = std::fs::Permissions::from_mode(0o600);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).ok()?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .and_then(|f| f.set_permissions(private))
        .ok()?;
    Some(path)
}

/// A thread owning the line editor, answering one prompt at a time.
fn terminal() -> Option<std::sync::mpsc::Sender<(String, oneshot::Sender<Option<Input>>)>> {
    use rustyline::error::ReadlineError;
    let mut editor = rustyline::DefaultEditor::new().ok()?;
    let history = history_file();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    let (requests, rx) = std::sync::mpsc::channel::<(String, oneshot::Sender<Option<Input>>)>();
    std::thread::spawn(move || {
        for (prompt, reply) in rx {
            let input = match editor.readline(&prompt) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = editor.add_history_entry(line.as_str());
                        if let Some(path) = &history {
                            let _ = editor.append_history(path);
                        }
                    }
                    Some(Input::Line(line))
                }
                Err(ReadlineError::Interrupted) => Some(Input::Interrupted),
                Err(_) => None,
            };
            let end = input.is_none();
            let _ = reply.send(input);
            if end {
                break;
            }
        }
    });
    Some(requests)
}
