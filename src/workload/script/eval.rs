//! A script's expressions evaluated as pgbench evaluates them: integers stay integers
//! (overflow is an error), a double anywhere makes a double; its random functions draw from
//! the session's own generator, with pgbench's definitions of each distribution.

use super::parse::{Expression, Function, Operator, Variables};
use crate::rng::SessionRng;

/// A variable's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Int(i64),
    Double(f64),
}

impl Value {
    fn as_double(self) -> f64 {
        match self {
            Value::Int(value) => value as f64,
            Value::Double(value) => value,
        }
    }

    fn as_int(self, what: &str) -> Result<i64, String> {
        match self {
            Value::Int(value) => Ok(value),
            Value::Double(value) if value.is_finite() && value.abs() < 9.2e18 => {
                Ok(value.trunc() as i64)
            }
            Value::Double(value) => Err(format!("{what}: {value} is out of the integer range")),
        }
    }
}

impl From<Value> for crate::db::driver::BoundValue {
    fn from(value: Value) -> Self {
        match value {
            Value::Int(value) => Self::Int(value),
            Value::Double(value) => Self::Double(value),
        }
    }
}

/// Evaluates an expression with the session's variables (None: not set yet).
pub(crate) fn evaluate(
    expression: &Expression,
    values: &[Option<Value>],
    variables: &Variables,
    random: &mut SessionRng,
) -> Result<Value, String> {
    let value = |expression: &Expression, random: &mut SessionRng| {
        evaluate(expression, values, variables, random)
    };
    Ok(match expression {
        Expression::Int(value) => Value::Int(*value),
        Expression::Double(value) => Value::Double(*value),
        Expression::Variable(variable) => values
            .get(*variable)
            .copied()
            .flatten()
            .ok_or_else(|| format!(":{} is used before it is set", variables.name(*variable)))?,
        Expression::Negate(inner) => match value(inner, random)? {
            Value::Int(value) => Value::Int(
                value
                    .checked_neg()
                    .ok_or_else(|| "integer out of range".to_string())?,
            ),
            Value::Double(value) => Value::Double(-value),
        },
        Expression::Binary(operator, left, right) => {
            let (left, right) = (value(left, random)?, value(right, random)?);
            binary(*operator, left, right)?
        }
        // least and greatest fold their arguments; the others take at most 3 (checked when
        // parsed), evaluated into an array: nothing is allocated per transaction.
        Expression::Call(function @ (Function::Least | Function::Greatest), arguments) => {
            let mut folded: Option<Value> = None;
            for argument in arguments {
                let next = value(argument, random)?;
                folded = Some(match folded {
                    None => next,
                    Some(so_far) => pick(*function == Function::Greatest, so_far, next),
                });
            }
            folded.ok_or_else(|| "least and greatest take 1 argument or more".to_string())?
        }
        Expression::Call(function, arguments) => {
            let mut evaluated = [Value::Int(0); 3];
            if arguments.len() > evaluated.len() {
                return Err("a function takes at most 3 arguments".to_string());
            }
            for (slot, argument) in evaluated.iter_mut().zip(arguments) {
                *slot = value(argument, random)?;
            }
            call(*function, &evaluated[..arguments.len()], random)?
        }
    })
}

/// The greater (or lesser) of two values: integers stay integers, a double makes a double.
fn pick(greater: bool, a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Int(a), Value::Int(b)) => Value::Int(if greater { a.max(b) } else { a.min(b) }),
        (a, b) => {
            let (a, b) = (a.as_double(), b.as_double());
            Value::Double(if greater { a.max(b) } else { a.min(b) })
        }
    }
}

fn binary(operator: Operator, left: Value, right: Value) -> Result<Value, String> {
    let overflow = || "integer out of range".to_string();
    Ok(match (left, right) {
        (Value::Int(a), Value::Int(b)) => Value::Int(match operator {
            Operator::Add => a.checked_add(b).ok_or_else(overflow)?,
            Operator::Subtract => a.checked_sub(b).ok_or_else(overflow)?,
            Operator::Multiply => a.checked_mul(b).ok_or_else(overflow)?,
            Operator::Divide | Operator::Modulo if b == 0 => {
                return Err("division by zero".to_string());
            }
            Operator::Divide => a.checked_div(b).ok_or_else(overflow)?,
            Operator::Modulo => a.checked_rem(b).unwrap_or(0),
        }),
        (left, right) => {
            let (a, b) = (left.as_double(), right.as_double());
            let result = match operator {
                Operator::Add => a + b,
                Operator::Subtract => a - b,
                Operator::Multiply => a * b,
                Operator::Divide if b == 0.0 => return Err("division by zero".to_string()),
                Operator::Divide => a / b,
                Operator::Modulo => return Err("% takes integers".to_string()),
            };
            if !result.is_finite() {
                return Err("double out of range".to_string());
            }
            Value::Double(result)
        }
    })
}

/// The bounds of a random function, checked: lb <= ub, and a range that fits.
fn bounds(arguments: &[Value], name: &str) -> Result<(i64, u64), String> {
    let low = arguments[0].as_int(name)?;
    let high = arguments[1].as_int(name)?;
    if low > high {
        return Err(format!("{name}: empty range ({low} > {high})"));
    }
    let span = (high as i128 - low as i128 + 1) as u128;
    if span > u64::MAX as u128 {
        return Err(format!("{name}: range too large"));
    }
    Ok((low, span as u64))
}

fn call(function: Function, arguments: &[Value], random: &mut SessionRng) -> Result<Value, String> {
    let double = |index: usize| arguments[index].as_double();
    Ok(match function {
        Function::Random => {
            let (low, span) = bounds(arguments, "random")?;
            Value::Int(low.wrapping_add(random.below(span) as i64))
        }
        Function::RandomExponential => {
            let (low, span) = bounds(arguments, "random_exponential")?;
            let parameter = double(2);
            if !(parameter > 0.0 && parameter.is_finite()) {
                return Err(format!(
                    "random_exponential: parameter {parameter} must be greater than 0"
                ));
            }
            // pgbench: -log(cut + (1 - cut) * u) / parameter, cut = exp(-parameter), u in (0, 1].
            let cut = (-parameter).exp();
            let uniform = 1.0 - random.unit();
            let share = -(cut + (1.0 - cut) * uniform).ln() / parameter;
            Value::Int(low.wrapping_add(((span as f64 * share) as u64).min(span - 1) as i64))
        }
        Function::RandomGaussian => {
            let (low, span) = bounds(arguments, "random_gaussian")?;
            let parameter = double(2);
            if !(2.0..=1e6).contains(&parameter) {
                return Err(format!(
                    "random_gaussian: parameter {parameter} must be from 2 to 1000000"
                ));
            }
            // pgbench: Box-Muller, redrawn outside +-parameter standard deviations.
            let deviation = loop {
                let first = 1.0 - random.unit();
                let second = random.unit();
                let deviation =
                    (-2.0 * first.ln()).sqrt() * (2.0 * std::f64::consts::PI * second).sin();
                if deviation.abs() < parameter {
                    break deviation;
                }
            };
            let share = (deviation + parameter) / (2.0 * parameter);
            Value::Int(low.wrapping_add(((span as f64 * share) as u64).min(span - 1) as i64))
        }
        Function::RandomZipfian => {
            let (low, span) = bounds(arguments, "random_zipfian")?;
            let s = double(2);
            // pgbench's bounds: nearer 1 the rejection loop would take minutes a draw.
            if !(1.001..=1000.0).contains(&s) {
                return Err(format!(
                    "random_zipfian: parameter {s} must be from 1.001 to 1000"
                ));
            }
            // pgbench's rejection-inversion for s > 1 (computeIterativeZipfian).
            let b = 2f64.powf(s - 1.0);
            let n = span as f64;
            let rank = loop {
                let u = 1.0 - random.unit();
                let v = random.unit();
                let x = u.powf(-1.0 / (s - 1.0)).floor();
                let t = (1.0 + 1.0 / x).powf(s - 1.0);
                if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n {
                    break x as u64;
                }
            };
            Value::Int(low.wrapping_add(rank as i64 - 1))
        }
        Function::Abs => match arguments[0] {
            Value::Int(value) => Value::Int(
                value
                    .checked_abs()
                    .ok_or_else(|| "integer out of range".to_string())?,
            ),
            Value::Double(value) => Value::Double(value.abs()),
        },
        // Folded where the call is evaluated (any number of arguments).
        Function::Least | Function::Greatest => {
            let greater = function == Function::Greatest;
            arguments
                .iter()
                .copied()
                .reduce(|so_far, next| pick(greater, so_far, next))
                .ok_or_else(|| "least and greatest take 1 argument or more".to_string())?
        }
        Function::Int => Value::Int(arguments[0].as_int("int")?),
        Function::Double => Value::Double(arguments[0].as_double()),
        Function::Sqrt => {
            let value = arguments[0].as_double();
            if value < 0.0 {
                return Err(format!("sqrt of a negative number ({value})"));
            }
            Value::Double(value.sqrt())
        }
        Function::Pi => Value::Double(std::f64::consts::PI),
        Function::Mod => binary(Operator::Modulo, arguments[0], arguments[1])?,
    })
}
