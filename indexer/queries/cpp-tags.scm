; inherits: c
; C++ symbols on top of the C ones. A member defined outside its class
; (`Matrix Matrix::transpose() {...}`) names the class as its @receiver.

(class_specifier
  name: (type_identifier) @name.definition.class
  body: (_)) @definition.class

; `class doc::result {`, `struct ns::box {`: a class defined outside its enclosing class
; or namespace names that scope as its @receiver (the innermost one, as for methods).
(class_specifier
  name: [
    (qualified_identifier
      scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
      name: (type_identifier) @name.definition.class)
    (qualified_identifier
      name: (qualified_identifier
        scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
        name: (type_identifier) @name.definition.class))
  ]
  body: (_)) @definition.class

(struct_specifier
  name: [
    (qualified_identifier
      scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
      name: (type_identifier) @name.definition.struct)
    (qualified_identifier
      name: (qualified_identifier
        scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
        name: (type_identifier) @name.definition.struct))
  ]
  body: (_)) @definition.struct

; A specialization (`template <> struct formatter<path> {`) is the template's behaviour
; for some arguments: it goes by the template's name.
(class_specifier
  name: (template_type name: (type_identifier) @name.definition.class)
  body: (_)) @definition.class

(struct_specifier
  name: (template_type name: (type_identifier) @name.definition.struct)
  body: (_)) @definition.struct

(namespace_definition
  name: (namespace_identifier) @name.definition.module) @definition.module

(alias_declaration
  name: (type_identifier) @name.definition.type) @definition.type

; Members defined or declared inside a class body; they come out as "method".
(function_definition
  declarator: [
    (function_declarator
      declarator: [(field_identifier) (destructor_name) (operator_name)] @name.definition.function)
    (pointer_declarator
      declarator: (function_declarator declarator: (field_identifier) @name.definition.function))
    (reference_declarator
      (function_declarator declarator: (field_identifier) @name.definition.function))
  ]) @definition.function

(field_declaration
  declarator: [
    (function_declarator
      declarator: [(field_identifier) (destructor_name) (operator_name)] @name.definition.function)
    (pointer_declarator
      declarator: (function_declarator declarator: (field_identifier) @name.definition.function))
    (reference_declarator
      (function_declarator declarator: (field_identifier) @name.definition.function))
  ]) @definition.function

; A constructor's or destructor's prototype in a class body is a plain declaration.
(field_declaration_list
  (declaration
    declarator: (function_declarator
      declarator: [(identifier) (destructor_name)] @name.definition.function)) @definition.function)

; Out-of-line definitions: Type::name(...) { ... }; a template's receiver is its name
; (`Foo<T>::bar` is Foo.bar).
(function_definition
  declarator: [
    (function_declarator
      declarator: (qualified_identifier
        scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
        name: [(identifier) (destructor_name) (operator_name)] @name.definition.function))
    (pointer_declarator
      declarator: (function_declarator
        declarator: (qualified_identifier
          scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
          name: (identifier) @name.definition.function)))
    (reference_declarator
      (function_declarator
        declarator: (qualified_identifier
          scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
          name: (identifier) @name.definition.function)))
  ]) @definition.function

; ns::Type::name(...) { ... }: the receiver is the innermost scope (Type.name).
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      name: (qualified_identifier
        scope: [(namespace_identifier) @receiver (template_type name: (_) @receiver)]
        name: [(identifier) (destructor_name) (operator_name)] @name.definition.function)))) @definition.function

; References.
(call_expression
  function: (qualified_identifier
    scope: (_) @reference.qualifier
    name: (identifier) @name.reference.call))
(call_expression function: (template_function name: (identifier) @name.reference.call))
(new_expression type: (type_identifier) @name.reference.call)
(base_class_clause (type_identifier) @name.reference.type)
