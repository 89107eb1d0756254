; Bash functions, file-level UPPER_CASE variables and sourced files.

(function_definition
  name: (word) @name.definition.function) @definition.function

(program
  (variable_assignment
    name: (variable_name) @name.definition.constant) @definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$"))

; source ./lib.sh   /   . ./lib.sh   (the first argument only)
(command
  name: (command_name) @_source
  .
  argument: [(word) (string) (raw_string)] @import.module
  (#any-of? @_source "source" ".")) @import

; References: a command may be a function defined here.
(command name: (command_name (word) @name.reference.call))
