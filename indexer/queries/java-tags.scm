; Java symbols and imports. Methods are functions inside a class-like symbol.

(class_declaration
  name: (identifier) @name.definition.class) @definition.class

(record_declaration
  name: (identifier) @name.definition.class) @definition.class

(interface_declaration
  name: (identifier) @name.definition.interface) @definition.interface

(annotation_type_declaration
  name: (identifier) @name.definition.interface) @definition.interface

(enum_declaration
  name: (identifier) @name.definition.enum) @definition.enum

(method_declaration
  name: (identifier) @name.definition.function) @definition.function

(constructor_declaration
  name: (identifier) @name.definition.constructor) @definition.constructor

(compact_constructor_declaration
  name: (identifier) @name.definition.constructor) @definition.constructor

; final fields named in UPPER_CASE
(field_declaration
  (modifiers "final")
  declarator: (variable_declarator
    name: (identifier) @name.definition.constant)
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant

; import a.b.C;   import static a.b.C.m;   import a.b.*;   (the module is the whole path)
(import_declaration
  [(identifier) (scoped_identifier)] @import.module) @import

; References.
(method_invocation !object name: (identifier) @name.reference.call)
(method_invocation
  object: (_) @reference.qualifier
  name: (identifier) @name.reference.call)
(object_creation_expression type: (type_identifier) @name.reference.call)
(object_creation_expression type: (generic_type (type_identifier) @name.reference.call))
(superclass (type_identifier) @name.reference.type)
(super_interfaces (type_list (type_identifier) @name.reference.type))
(formal_parameter type: (type_identifier) @name.reference.type)
(local_variable_declaration type: (type_identifier) @name.reference.type)
(field_declaration type: (type_identifier) @name.reference.type)
