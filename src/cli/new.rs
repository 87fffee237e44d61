//! `chatparse new MODEL --template T.jinja`: scaffolds a fixture folder whose cases are example
//! messages rendered by the template and verified by parsing them back.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::fixtures::scaffold::{scaffold, TemplateKeep};

/// Scaffold `DIR/MODEL/`: the manifest (default tools), the template (copied, or referenced by
/// file name with `--reference`), the analysis snapshot, and one case per example message the
/// template can render (content, reasoning, calls, parallel calls, ...), each verified by a
/// round trip. Review the cases, describe the family in `model.json`, then add the outputs
/// your server really sees.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The model folder name (e.g. `qwen3-coder`).
    model: String,
    /// The chat template file.
    #[arg(long)]
    template: PathBuf,
    /// Reference the template by file name (from `CHATPARSE_TEMPLATES` or
    /// `../shared/templates`) instead of copying it into the folder.
    #[arg(long)]
    reference: bool,
    /// The fixture corpus directory.
    #[arg(long, default_value = "fixtures")]
    dir: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: &NewArgs) -> ExitCode {
    let keep = if args.reference {
        let name = args
            .template
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        TemplateKeep::Reference(name)
    } else {
        TemplateKeep::Copy
    };
    let out = match scaffold(&args.dir, &args.model, &args.template, keep) {
        Ok(out) => out,
        Err(why) => {
            eprintln!("chatparse new: {why}");
            return ExitCode::from(2);
        }
    };
    println!("created {}", out.dir.display());
    for name in &out.verified {
        println!("  {name}: verified (rendered and parsed back)");
    }
    for (name, why) in &out.failed {
        println!(
            "  {name}: written, but the parser disagrees ({why}); add `{}/{name}<TAB>reason` \
             to known_failures.txt or fix the parser",
            args.model
        );
    }
    for (name, why) in &out.skipped {
        println!("  {name}: not renderable by this template ({why})");
    }
    ExitCode::SUCCESS
}
