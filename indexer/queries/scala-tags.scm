; Scala symbols and imports. `object X` is a singleton class, so its defs are methods
; (an object and its companion class are two symbols on different lines).

(class_definition
  name: (identifier) @name.definition.class) @definition.class

(object_definition
  name: (identifier) @name.definition.class) @definition.class

(trait_definition
  name: (identifier) @name.definition.trait) @definition.trait

(enum_definition
  name: (identifier) @name.definition.enum) @definition.enum

(function_definition
  name: (identifier) @name.definition.function) @definition.function

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(type_definition
  name: (type_identifier) @name.definition.type) @definition.type

; import a.b.c   /   import a.b._   /   import a.b.{C, D => E}
; The path is split into one node per segment: @import.path spans them all. (Matching
; the `path:` field yields only its first node; the direct identifiers are the path.)
(import_declaration
  (identifier) @import.path) @import

(import_declaration
  (namespace_selectors (identifier) @import.name)) @import

(import_declaration
  (namespace_selectors (arrow_renamed_identifier name: (_) @import.name))) @import

; References.
(call_expression function: (identifier) @name.reference.call)
(call_expression
  function: (field_expression
    value: (_) @reference.qualifier
    field: (identifier) @name.reference.call))
(instance_expression (type_identifier) @name.reference.call)
(extends_clause type: (type_identifier) @name.reference.type)
(parameter type: (type_identifier) @name.reference.type)
