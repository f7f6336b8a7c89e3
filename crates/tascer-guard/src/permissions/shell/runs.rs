//! [`Runs`]: what one simple command runs besides itself, as the program
//! classifiers (`programs`, `git_program`) report it.

use super::ShellWord;

/// What one simple command runs besides itself.
#[derive(Debug, Default)]
pub(crate) struct Runs {
    /// The argv the command really amounts to, when it differs from the
    /// one written (`git -C . push` → `git push`).
    pub rewrite: Option<Vec<ShellWord>>,
    /// Shell command lines it runs, with a label for `via`.
    pub scripts: Vec<(String, ShellWord)>,
    /// Other argvs it runs.
    pub argvs: Vec<Vec<ShellWord>>,
    /// Code the analysis cannot see: what it is, and the argv index of the
    /// word that names it (an allow rule must cover that word to exempt it).
    pub opaque: Vec<(String, Option<usize>)>,
}

impl Runs {
    /// Runs nothing visible, only `what`: code the analysis cannot see.
    pub(super) fn opaque(what: impl Into<String>, word: Option<usize>) -> Self {
        Runs {
            opaque: vec![(what.into(), word)],
            ..Runs::default()
        }
    }
}

/// Records `text` (the value of `word`, at argv index `index`) as a shell
/// command line run by the program, or as opaque when it is dynamic.
pub(super) fn push_script(out: &mut Runs, label: &str, word: &ShellWord, text: &str, index: usize) {
    if word.literal {
        out.scripts
            .push((label.to_string(), ShellWord::literal(text)));
    } else {
        out.opaque.push((
            format!("`{label}` runs a command known only at run time"),
            Some(index),
        ));
    }
}
