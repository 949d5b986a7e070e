//! [`Fresh`]: a view that, when its reactive parent renders it again, is built anew rather
//! than diffed in place. The flows swap whole steps and views; diffing them would never
//! pay, and the code for diffing every view type (tachys' `rebuild`) was about a fifth of
//! the bundle. Building anew keeps only the code that builds each view.

use std::future::Future;

use leptos::prelude::*;
use leptos::tachys::html::attribute::any_attribute::AnyAttribute;
use leptos::tachys::html::attribute::Attribute;
use leptos::tachys::hydration::Cursor;
use leptos::tachys::view::add_attr::AddAnyAttr;
use leptos::tachys::view::{Mountable, Position, PositionState, Render, RenderHtml};

/// `view` as a type-erased view whose re-render replaces it. Its first node must be an
/// element or text (as every view of the flows is), so the new view can be put before it.
pub fn fresh<T: RenderHtml + 'static>(view: T) -> AnyView
where
    T::State: 'static,
{
    Fresh(view).into_any()
}

pub struct Fresh<T>(pub T);

impl<T: Render> Render for Fresh<T> {
    type State = T::State;

    fn build(self) -> Self::State {
        self.0.build()
    }

    fn rebuild(self, state: &mut Self::State) {
        let mut new = self.0.build();
        state.insert_before_this(&mut new);
        state.unmount();
        *state = new;
    }
}

impl<T: AddAnyAttr> AddAnyAttr for Fresh<T> {
    type Output<SomeNewAttr: Attribute> = Fresh<T::Output<SomeNewAttr>>;

    fn add_any_attr<NewAttr: Attribute>(self, attr: NewAttr) -> Self::Output<NewAttr>
    where
        Self::Output<NewAttr>: RenderHtml,
    {
        Fresh(self.0.add_any_attr(attr))
    }
}

impl<T: RenderHtml> RenderHtml for Fresh<T> {
    type AsyncOutput = Fresh<T::AsyncOutput>;
    type Owned = Fresh<T::Owned>;

    const MIN_LENGTH: usize = T::MIN_LENGTH;

    fn dry_resolve(&mut self) {
        self.0.dry_resolve();
    }

    fn resolve(self) -> impl Future<Output = Self::AsyncOutput> + Send {
        let inner = self.0.resolve();
        async move { Fresh(inner.await) }
    }

    fn to_html_with_buf(
        self,
        buf: &mut String,
        position: &mut Position,
        escape: bool,
        mark_branches: bool,
        extra_attrs: Vec<AnyAttribute>,
    ) {
        self.0.to_html_with_buf(buf, position, escape, mark_branches, extra_attrs);
    }

    fn hydrate<const FROM_SERVER: bool>(self, cursor: &Cursor, position: &PositionState) -> Self::State {
        self.0.hydrate::<FROM_SERVER>(cursor, position)
    }

    fn into_owned(self) -> Self::Owned {
        Fresh(self.0.into_owned())
    }
}

/// `.fresh()`: [`fresh`] as a method, where `.into_any()` would be.
pub trait IntoFresh: RenderHtml + Sized + 'static
where
    Self::State: 'static,
{
    fn fresh(self) -> AnyView {
        fresh(self)
    }
}

impl<T: RenderHtml + 'static> IntoFresh for T where T::State: 'static {}
