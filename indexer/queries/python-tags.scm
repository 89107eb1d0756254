; Python symbols and imports.
; A function nested directly in a class becomes a method on the Python side.
; @doc: the docstring, a bare string first in the body.

(class_definition
  name: (identifier) @name.definition.class
  body: (block . (string)? @doc)) @definition.class

(function_definition
  name: (identifier) @name.definition.function
  body: (block . (string)? @doc)) @definition.function

; Module-level UPPER_CASE assignments are constants.
(module
  (assignment
    left: (identifier) @name.definition.constant) @definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$"))

; import a.b, c as d
(import_statement
  name: [
    (dotted_name) @import.module
    (aliased_import name: (dotted_name) @import.module)
  ]) @import

; from a.b import c, d as e   /   from . import x   /   from a import *
(import_from_statement
  module_name: (_) @import.module
  name: [
    (dotted_name) @import.name
    (aliased_import name: (dotted_name) @import.name)
  ]?) @import

(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.name) @import
