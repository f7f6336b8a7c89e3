//! Permission modes and the tool classes they treat differently: plain
//! types of `tascer-core` (the settings files name a mode too).

pub use tascer_core::permission_mode::{
    EDIT_TOOLS, PermissionMode, READ_TOOLS, ToolClass, UnknownPermissionMode,
};
