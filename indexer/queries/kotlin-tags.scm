; Kotlin symbols and imports. This grammar has no field names: the name is the first
; (type_identifier) or (simple_identifier) child. The specific class patterns come
; first: for one node the earliest pattern wins.

(class_declaration
  "interface"
  (type_identifier) @name.definition.interface) @definition.interface

(class_declaration
  (type_identifier) @name.definition.enum
  (enum_class_body)) @definition.enum

(class_declaration
  (type_identifier) @name.definition.class) @definition.class

; `object X` is a singleton class; a companion object has no name and is transparent.
(object_declaration
  (type_identifier) @name.definition.class) @definition.class

(function_declaration
  (simple_identifier) @name.definition.function) @definition.function

(type_alias
  (type_identifier) @name.definition.type) @definition.type

(property_declaration
  (modifiers (property_modifier) @_const)
  (variable_declaration (simple_identifier) @name.definition.constant)
  (#eq? @_const "const")) @definition.constant

; import a.b.C   /   import a.b.*   (the module is the whole path)
(import_header
  (identifier) @import.module) @import

; References.
(call_expression (simple_identifier) @name.reference.call)
(call_expression
  (navigation_expression
    (_) @reference.qualifier
    (navigation_suffix (simple_identifier) @name.reference.call)))
(user_type (type_identifier) @name.reference.type)
