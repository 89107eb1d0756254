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

; import a.b, c as d   (@import.alias: the name a module or name is bound to instead)
(import_statement
  name: [
    (dotted_name) @import.module
    (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)
  ]) @import

; from a.b import c, d as e   /   from . import x   /   from a import *
(import_from_statement
  module_name: (_) @import.module
  name: [
    (dotted_name) @import.name
    (aliased_import name: (dotted_name) @import.name alias: (identifier) @import.alias)
  ]?) @import

(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.name) @import

; References: calls, decorators, annotations and base classes. @reference.qualifier is
; what a name is reached through (`store` in `store.save()`).
(call function: (identifier) @name.reference.call)
; `[*f(x).y]` parses with the splat inside the call's function.
(call function: (list_splat (identifier) @name.reference.call))
(call
  function: (attribute
    object: (_) @reference.qualifier
    attribute: (identifier) @name.reference.call))
(decorator (identifier) @name.reference.call)
(decorator (attribute object: (_) @reference.qualifier attribute: (identifier) @name.reference.call))
(type (identifier) @name.reference.type)
(type (attribute object: (_) @reference.qualifier attribute: (identifier) @name.reference.type))
(class_definition superclasses: (argument_list (identifier) @name.reference.type))
(class_definition
  superclasses: (argument_list
    (attribute object: (_) @reference.qualifier attribute: (identifier) @name.reference.type)))
; A function passed as a value: `key=helper`, `map(helper, xs)`.
(argument_list (identifier) @name.reference.other)
(keyword_argument value: (identifier) @name.reference.other)
