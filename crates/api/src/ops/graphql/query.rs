//! A GraphQL document read as far as the endpoint answers it: one anonymous or named `query`
//! whose selections are plain fields (with aliases) and nested selection sets. Anything else a
//! GraphQL document may hold (variables, arguments, directives, fragments, mutations, several
//! operations) is recognised and refused as not supported, rather than misread.

/// One selected field: `alias: name { … }`.
#[derive(Debug, PartialEq, Eq)]
pub struct Field {
    pub alias: Option<String>,
    pub name: String,
    pub selections: Option<Vec<Field>>,
}

impl Field {
    /// The key of its value in the response.
    pub fn key(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
}

/// The one operation of a document.
#[derive(Debug, PartialEq, Eq)]
pub struct Operation {
    pub name: Option<String>,
    pub selections: Vec<Field>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum QueryError {
    /// Not GraphQL: the message and where (line, column, from 1).
    Syntax(String, (usize, usize)),
    /// GraphQL this endpoint does not answer: what it is.
    Unsupported(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Name(String),
    Punct(char),
    Spread,
    /// A string, a number or any other character: never valid where the endpoint reads.
    Other(String),
    End,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    line: usize,
    line_start: usize,
    src: &'a str,
}

impl Lexer<'_> {
    /// The next token and where it starts. Whitespace, commas, the BOM and comments are ignored.
    fn next(&mut self) -> (Tok, (usize, usize)) {
        while let Some(&(i, c)) = self.chars.peek() {
            match c {
                '\n' => {
                    self.chars.next();
                    self.line += 1;
                    self.line_start = i + 1;
                }
                ' ' | '\t' | '\r' | ',' | '\u{feff}' => {
                    self.chars.next();
                }
                '#' => {
                    while self.chars.peek().is_some_and(|&(_, c)| c != '\n') {
                        self.chars.next();
                    }
                }
                _ => break,
            }
        }
        let Some((start, c)) = self.chars.next() else {
            return (Tok::End, (self.line, self.src.len() - self.line_start + 1));
        };
        let at = (self.line, self.src[self.line_start..start].chars().count() + 1);
        let tok = match c {
            '_' | 'a'..='z' | 'A'..='Z' => {
                let mut name = String::from(c);
                while let Some(&(_, c)) = self.chars.peek().filter(|(_, c)| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.chars.next();
                }
                Tok::Name(name)
            }
            '{' | '}' | '(' | ')' | ':' | '$' | '!' | '=' | '@' | '[' | ']' | '|' | '&' => Tok::Punct(c),
            '.' if self.src[start..].starts_with("...") => {
                self.chars.next();
                self.chars.next();
                Tok::Spread
            }
            other => Tok::Other(other.to_string()),
        };
        (tok, at)
    }
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    tok: Tok,
    at: (usize, usize),
}

impl Parser<'_> {
    fn advance(&mut self) {
        (self.tok, self.at) = self.lexer.next();
    }

    fn error<T>(&self, expected: &str) -> Result<T, QueryError> {
        let found = match &self.tok {
            Tok::Name(n) => format!("\"{n}\""),
            Tok::Punct(c) => format!("\"{c}\""),
            Tok::Spread => "\"...\"".into(),
            Tok::Other(o) => format!("\"{o}\""),
            Tok::End => "end of file".into(),
        };
        Err(QueryError::Syntax(format!("Parse error on {found} at [{}, {}]: expected {expected}", self.at.0, self.at.1), self.at))
    }

    /// What may follow a name or a field and is not supported.
    fn refuse_extras(&self) -> Result<(), QueryError> {
        match self.tok {
            Tok::Punct('(') => Err(QueryError::Unsupported("arguments and variables".into())),
            Tok::Punct('@') => Err(QueryError::Unsupported("directives".into())),
            _ => Ok(()),
        }
    }

    fn selection_set(&mut self) -> Result<Vec<Field>, QueryError> {
        if self.tok != Tok::Punct('{') {
            return self.error("\"{\"");
        }
        self.advance();
        let mut fields = Vec::new();
        loop {
            match std::mem::replace(&mut self.tok, Tok::End) {
                Tok::Punct('}') if !fields.is_empty() => {
                    self.advance();
                    return Ok(fields);
                }
                Tok::Spread => return Err(QueryError::Unsupported("fragments".into())),
                Tok::Name(first) => {
                    self.advance();
                    let (alias, name) = if self.tok == Tok::Punct(':') {
                        self.advance();
                        match std::mem::replace(&mut self.tok, Tok::End) {
                            Tok::Name(name) => (Some(first), name),
                            other => {
                                self.tok = other;
                                return self.error("a field name");
                            }
                        }
                    } else {
                        (None, first)
                    };
                    if alias.is_some() {
                        self.advance();
                    }
                    self.refuse_extras()?;
                    let selections = if self.tok == Tok::Punct('{') { Some(self.selection_set()?) } else { None };
                    fields.push(Field { alias, name, selections });
                }
                other => {
                    self.tok = other;
                    return self.error("a field");
                }
            }
        }
    }
}

/// Reads `src`, a document of one query operation.
pub fn parse(src: &str) -> Result<Operation, QueryError> {
    let mut p = Parser { lexer: Lexer { chars: src.char_indices().peekable(), line: 1, line_start: 0, src }, tok: Tok::End, at: (1, 1) };
    p.advance();
    let mut name = None;
    match &p.tok {
        Tok::Punct('{') => {}
        Tok::Name(kw) if kw == "query" => {
            p.advance();
            if let Tok::Name(n) = &p.tok {
                name = Some(n.clone());
                p.advance();
            }
            p.refuse_extras()?;
        }
        Tok::Name(kw) if kw == "mutation" || kw == "subscription" => return Err(QueryError::Unsupported(format!("{kw} operations"))),
        Tok::Name(kw) if kw == "fragment" => return Err(QueryError::Unsupported("fragments".into())),
        _ => return p.error("\"query\" or \"{\""),
    }
    let selections = p.selection_set()?;
    match p.tok {
        Tok::End => Ok(Operation { name, selections }),
        Tok::Name(_) | Tok::Punct('{') => Err(QueryError::Unsupported("documents of several operations or fragments".into())),
        _ => p.error("end of file"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(alias: Option<&str>, name: &str, selections: Option<Vec<Field>>) -> Field {
        Field { alias: alias.map(String::from), name: name.into(), selections }
    }

    #[test]
    fn reads_queries_with_names_aliases_commas_and_comments() {
        let op = parse("query UserCurrent{viewer{login}}").unwrap();
        assert_eq!(op.name.as_deref(), Some("UserCurrent"));
        assert_eq!(op.selections, vec![field(None, "viewer", Some(vec![field(None, "login", None)]))]);
        let op = parse("# who am I\n{ me: viewer { login, handle: login\n id } }").unwrap();
        assert_eq!(op.name, None);
        let viewer = &op.selections[0];
        assert_eq!((viewer.key(), viewer.name.as_str()), ("me", "viewer"));
        let keys: Vec<_> = viewer.selections.as_ref().unwrap().iter().map(|f| (f.key(), f.name.as_str())).collect();
        assert_eq!(keys, [("login", "login"), ("handle", "login"), ("id", "id")]);
    }

    #[test]
    fn refuses_what_it_does_not_answer() {
        let unsupported = |q: &str| matches!(parse(q), Err(QueryError::Unsupported(_)));
        assert!(unsupported("query($n: Int) { viewer { login } }"));
        assert!(unsupported("{ repository(owner: \"o\", name: \"r\") { id } }"));
        assert!(unsupported("{ viewer @include(if: true) { login } }"));
        assert!(unsupported("{ viewer { ...F } }"));
        assert!(unsupported("mutation { addStar { id } }"));
        assert!(unsupported("{ viewer { login } } query Other { viewer { id } }"));
    }

    #[test]
    fn reports_syntax_errors_where_they_are() {
        assert_eq!(parse("{ viewer { } }"), Err(QueryError::Syntax("Parse error on \"}\" at [1, 12]: expected a field".into(), (1, 12))));
        assert!(matches!(parse("{ viewer { login }"), Err(QueryError::Syntax(_, _))));
        assert!(matches!(parse(""), Err(QueryError::Syntax(_, (1, 1)))));
        assert!(matches!(parse("query {\n  viewer { login } } }"), Err(QueryError::Syntax(_, (2, 22)))));
        assert!(matches!(parse("{ a: 1 }"), Err(QueryError::Syntax(_, _))));
        assert!(matches!(parse("hello"), Err(QueryError::Syntax(_, _))));
    }
}
