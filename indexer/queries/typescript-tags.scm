; inherits: javascript
; TypeScript symbols on top of the JavaScript ones (tsx-tags.scm inherits these).

(interface_declaration
  name: (_) @name.definition.interface) @definition.interface

(type_alias_declaration
  name: (_) @name.definition.type) @definition.type

(enum_declaration
  name: (_) @name.definition.enum) @definition.enum

(abstract_class_declaration
  name: (_) @name.definition.class) @definition.class

; namespace N { ... }   /   declare module "m" { ... }
(internal_module
  name: (_) @name.definition.module) @definition.module

(module
  name: (_) @name.definition.module) @definition.module

; Interface members, abstract methods, overload and ambient signatures; inside a class or
; interface they come out as "method".
(method_signature
  name: (_) @name.definition.function) @definition.function

(abstract_method_signature
  name: (_) @name.definition.function) @definition.function

(function_signature
  name: (_) @name.definition.function) @definition.function

; References to types.
(type_annotation (type_identifier) @name.reference.type)
(generic_type name: (type_identifier) @name.reference.type)
(type_arguments (type_identifier) @name.reference.type)
(extends_clause value: (identifier) @name.reference.type)
(implements_clause (type_identifier) @name.reference.type)
